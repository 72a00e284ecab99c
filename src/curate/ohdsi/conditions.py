"""SqlRender conditions: ``{condition} ? {...}`` evaluated after substitution."""

from __future__ import annotations

from curate.ohdsi.errors import BAD_CONDITION, RenderError


def _condition_tokens(text: str) -> list[tuple[str, str]]:
    """(kind, value) tokens of a condition: op, str (quotes removed), word."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith(("==", "!=", "<>", "&&", "||"), i):
            op = text[i : i + 2]
            out.append(("op", {"&&": "&", "||": "|", "<>": "!="}.get(op, op)))
            i += 2
        elif c in "&|!(),":
            out.append(("op", c))
            i += 1
        elif c in "'\"":
            j = text.find(c, i + 1)
            if j < 0:
                raise RenderError(BAD_CONDITION, f"unclosed quote in condition {{{text}}}")
            out.append(("str", text[i + 1 : j]))
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "&|!(),'\"=<>":
                j += 1
            if j == i:
                raise RenderError(BAD_CONDITION, f"cannot read condition {{{text}}}")
            out.append(("word", text[i:j]))
            i = j
    return out


class Condition:
    """Evaluates a SqlRender condition after substitution.

    expr := term (('&' term)* | ('|' term)*);  term := '!' term | '(' expr ')' | test;
    test := value [('==' | '!=') value | IN '(' value (',' value)* ')'].
    A value compared is text (quotes removed); a lone value must be true/false/1/0.

    >>> Condition("1 IN (2, 1) & !('a' == b)").value()
    True
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _condition_tokens(text)
        self.pos = 0

    def _fail(self, why: str) -> RenderError:
        return RenderError(BAD_CONDITION, f"condition {{{self.text}}}: {why}")

    def _peek(self) -> tuple[str, str] | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def _take_op(self, op: str) -> bool:
        if self._peek() == ("op", op):
            self.pos += 1
            return True
        return False

    def value(self) -> bool:
        result = self._expr()
        if self.pos != len(self.toks):
            raise self._fail(f"unexpected {self.toks[self.pos][1]!r}")
        return result

    def _expr(self) -> bool:
        result = self._term()
        joiner = None
        while (tok := self._peek()) in (("op", "&"), ("op", "|")):
            if joiner is not None and tok[1] != joiner:
                raise self._fail("mixes & and | without parentheses")
            joiner = tok[1]
            self.pos += 1
            right = self._term()
            result = (result and right) if joiner == "&" else (result or right)
        return result

    def _term(self) -> bool:
        if self._take_op("!"):
            return not self._term()
        if self._take_op("("):
            result = self._expr()
            if not self._take_op(")"):
                raise self._fail("missing ')'")
            return result
        return self._test()

    def _operand(self) -> tuple[str, bool]:
        """(text, quoted); an operand left empty by substitution is ''."""
        tok = self._peek()
        if tok is not None and tok[0] in ("str", "word") and tok[1].upper() != "IN":
            self.pos += 1
            return tok[1], tok[0] == "str"
        return "", False

    def _test(self) -> bool:
        left, quoted = self._operand()
        if self._take_op("=="):
            return left == self._operand()[0]
        if self._take_op("!="):
            return left != self._operand()[0]
        tok = self._peek()
        if tok is not None and tok[0] == "word" and tok[1].upper() == "IN":
            self.pos += 1
            if not self._take_op("("):
                raise self._fail("IN needs '('")
            options = [self._operand()[0]]
            while self._take_op(","):
                options.append(self._operand()[0])
            if not self._take_op(")"):
                raise self._fail("missing ')' after IN list")
            return left in options
        literal = left.lower()
        if not quoted and literal in ("true", "1"):
            return True
        if not quoted and literal in ("false", "0"):
            return False
        raise self._fail(f"{left!r} is not true or false")


