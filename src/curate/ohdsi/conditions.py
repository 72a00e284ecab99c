"""SqlRender conditions: the text of ``{condition} ? ...`` evaluated as SqlRender evaluates it.

SqlRender (OHDSI/SqlRender, ``SqlRender.evaluateCondition``) reads a condition as text,
after parameter substitution, and sqlgold reads it the same way, quirks included, so a
template renders here as it renders for the people who wrote it:

1. every parenthesised group that does not follow ``IN`` is evaluated on its own,
   innermost first, and replaced by ``1`` or ``0``;
2. if the text holds ``&`` it is split at every ``&`` and is true when every part is;
   else, if it holds ``|``, it is split at every ``|`` and is true when any part is (so
   ``&`` and ``|`` mixed without parentheses split at ``&`` only, and ``&&`` leaves an
   empty part, which is an error);
3. a part is ``true``/``1``/``!false``/``!0`` or ``false``/``0``/``!true``/``!1`` (any
   case); else ``a == b``, ``a != b`` or ``a <> b`` compares the two sides as text, each
   trimmed and stripped of one pair of surrounding quotes; else ``a IN (x,y)`` is true
   when ``a`` equals an element, each element stripped of quotes but *not* trimmed
   (so ``1 IN (2, 1)`` is false: the element is ``' 1'``); anything else is an error.

>>> evaluate("TRUE & (FALSE | 1 IN (1,2,3))")
True
>>> evaluate("1 IN (2, 1)")
False
>>> evaluate("'DRUG_ERA' != 'DOSE_ERA' & (x == 'UNIT_CONCEPT_ID' | x == 'x')")
True
"""

from __future__ import annotations

from dataclasses import dataclass

from curate.ohdsi.errors import BAD_CONDITION, RenderError

_FALSE = frozenset({"false", "0", "!true", "!1"})
_TRUE = frozenset({"true", "1", "!false", "!0"})


def trim(text: str) -> str:
    """Text without leading and trailing characters up to the space (as Java's ``trim``).

    >>> trim("\\t a b \\n")
    'a b'
    """
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def unquote(text: str) -> str:
    """Text without one pair of surrounding single or double quotes.

    >>> unquote("'a'"), unquote('"b"'), unquote("'c"), unquote(" 'd'")
    ('a', 'b', "'c", " 'd'")
    """
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def split(text: str, separator: str) -> list[str]:
    """``text`` split at every ``separator``, trailing empty parts dropped (as Java's ``split``).

    >>> split("a&&b&", "&")
    ['a', '', 'b']
    """
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


@dataclass
class _Group:
    start: int
    end: int  # one past ')'


def _groups(text: str) -> list[_Group]:
    """Matched parentheses in the order they close (inner groups first)."""
    opened: list[int] = []
    found: list[_Group] = []
    for at, char in enumerate(text):
        if char == "(":
            opened.append(at)
        elif char == ")" and opened:
            found.append(_Group(opened.pop(), at + 1))
    return found


def _follows_in(text: str, at: int) -> bool:
    """Whether the ``(`` at ``at`` follows the word IN (SqlRender's ``precededByIn``)."""
    wanted = "ni"
    matched = 0
    for char in reversed(text[:at].lower()):
        if not char.isspace():
            if matched < 2 and char == wanted[matched]:
                matched += 1
            else:
                return False
        elif matched == 2:
            return True
    return False


def evaluate(condition: str) -> bool:
    """The value SqlRender gives ``condition``; :class:`RenderError` where SqlRender fails."""
    text = trim(condition)
    groups = _groups(text)
    for group in groups:
        if _follows_in(text, group.start):
            continue
        value = "1" if _boolean(text[group.start + 1 : group.end - 1], condition) else "0"
        start, end = group.start, group.end
        text = text[:start] + value + text[end:]
        shift = start + 1 - end
        for other in groups:
            if other.start > end:
                other.start += shift
                other.end += shift
            elif other.start <= start and other.end > end:
                other.end += shift
    return _boolean(text, condition)


def _boolean(text: str, condition: str) -> bool:
    text = trim(text)
    if "&" in text:
        return all(_primitive(part, condition) for part in split(text, "&"))
    if "|" in text:
        return any(_primitive(part, condition) for part in split(text, "|"))
    return _primitive(text, condition)


def _primitive(text: str, condition: str) -> bool:
    text = trim(text)
    lower = text.lower()
    if lower in _FALSE:
        return False
    if lower in _TRUE:
        return True
    at = text.find("==")
    if at >= 0:
        return _side(text[:at]) == _side(text[at + 2 :])
    at = text.find("!=")
    if at < 0:
        at = text.find("<>")
    if at >= 0:
        return _side(text[:at]) != _side(text[at + 2 :])
    at = lower.find(" in ")
    if at >= 0:
        left, options = _side(text[:at]), trim(text[at + 4 :])
        if len(options) > 2 and options[0] == "(" and options[-1] == ")":
            return any(left == unquote(part) for part in split(options[1:-1], ","))
    raise RenderError(
        BAD_CONDITION,
        f"condition {{{trim(condition)}}}: SqlRender cannot evaluate {text!r}",
    )


def _side(text: str) -> str:
    return unquote(trim(text))
