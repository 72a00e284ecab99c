"""Answer extraction: from a model's raw output to SQL, an abstention, or a failure.

The rules of seed 004, in order:

1. JSON ``null`` (``None``) or the string ``"null"`` abstains.
2. If the last fenced code block (any language) holds only the word ``ABSTAIN``, the
   answer abstains.
3. Else the last fenced block tagged ``sql`` is the answer.
4. Else the answer is the text from the first line that starts with ``SELECT`` or
   ``WITH``: to the closing fence when that line sits in an untagged block, else to the
   end, but for prose after the query: the text stops before the first line of prose
   that follows a blank line or a line ending in ``;`` (:func:`is_prose`: a line that
   starts as a sentence or as Markdown does), so a model that writes its query and then
   explains it is read as a fenced answer is.
5. Else, with no code block at all, a last line that is only ``ABSTAIN`` abstains.
6. Else there is neither SQL nor ABSTAIN: a cut-off when the generator reported it hit
   its output limit, otherwise a format failure.

>>> extract("Here you go:\\n```sql\\nSELECT 1\\n```").sql
'SELECT 1'
>>> extract("```\\nABSTAIN\\n```").kind
'abstain'
>>> extract("I cannot tell.").kind
'format_failure'
>>> extract("Thinking...", status="cut_off").kind
'cut_off'
>>> extract("SELECT count(*) FROM person;\\n\\nThis query counts the persons.").sql
'SELECT count(*) FROM person;'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SQL = "sql"
ABSTAIN = "abstain"
FORMAT_FAILURE = "format_failure"
CUT_OFF = "cut_off"

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)[^\n]*$", re.MULTILINE)
_SQL_START = re.compile(r"^[ \t]*(SELECT|WITH)\b", re.IGNORECASE | re.MULTILINE)

#: How prose starts: a Markdown heading or bold text; a list item (``-``, ``*``, ``+``,
#: ``1.``) whose first word is not SQL's; a sentence: a capitalised word, not SQL's,
#: followed by a lower-case word or a colon.
_HEADING = re.compile(r"[ \t]*(?:#{1,6}[ \t]|\*\*)")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?:(?P<word>[A-Za-z]+)|[`'\"])")
_SENTENCE = re.compile(r"[ \t]*(?P<word>[A-Z][a-z']*)(?::|[ \t]+[a-z])")

#: Words that begin a line of a query (a clause, a join, a condition), which a line of
#: prose never starts with even when written as a sentence is ("From person p").
SQL_LINE_WORDS = frozenset(
    """select with from where group order having limit offset fetch union intersect
    except minus join left right inner outer full cross natural on using and or not case
    when then else end as qualify window values lateral exists between is over
    partition asc desc nulls distinct all any some like ilike rows range filter within
    interval cast""".split()
)

_RULE_SQL_BLOCK = "the last ```sql block"
_RULE_FROM_SELECT = "the text from the first SELECT/WITH line"


def is_abstain(text: str) -> bool:
    """Whether ``text`` is only the word ABSTAIN (any case, an optional ``;``).

    Plain string operations, not a regular expression: ``\\s*;?\\s*$`` backtracks
    quadratically over a long run of spaces that does not end the text.

    >>> is_abstain("  abstain ;\\n"), is_abstain("ABSTAIN " + " " * 100_000 + "x")
    (True, False)
    """
    word = text.strip()
    if word.endswith(";"):
        word = word[:-1].rstrip()
    return word.casefold() == "abstain"


@dataclass(frozen=True)
class Extraction:
    """What an answer says: ``kind`` is sql, abstain, format_failure or cut_off."""

    kind: str
    sql: str | None
    reason: str


@dataclass(frozen=True)
class CodeBlock:
    language: str
    body: str
    start: int  # offset of the opening fence line
    body_end: int  # offset of the closing fence line (or the text's end)


def is_prose(line: str) -> bool:
    """Whether ``line`` starts as prose does, not as a line of a query.

    >>> [is_prose(x) for x in ("This query counts.", "Note: ages", "- a list", "1. first")]
    [True, True, True, True]
    >>> [is_prose(x) for x in ("From person p", "WHERE x = 1", "* FROM t", "Person_id, x")]
    [False, False, False, False]
    """
    if _HEADING.match(line):
        return True
    found = _LIST_ITEM.match(line) or _SENTENCE.match(line)
    if found is None:
        return False
    word = found.group("word")
    return word is None or word.lower() not in SQL_LINE_WORDS


def sql_before_prose(text: str) -> tuple[str, bool]:
    """``text`` (a query and what follows it) up to the first line of prose that follows
    a blank line or a line ending in ``;``; and whether prose was cut off.

    >>> sql_before_prose("WITH a AS (SELECT 1)\\n\\nSELECT * FROM a\\n\\nHere a is one row.")
    ('WITH a AS (SELECT 1)\\n\\nSELECT * FROM a', True)
    """
    offset, after_break = 0, False
    for line in text.splitlines(keepends=True):
        body = line.strip()
        if after_break and body and is_prose(line):
            return text[:offset].strip(), True
        if body:
            after_break = body.endswith(";")
        else:
            after_break = offset > 0
        offset += len(line)
    return text.strip(), False


def code_blocks(text: str) -> list[CodeBlock]:
    """The fenced code blocks of ``text`` in order; an unclosed last block runs to the end.

    >>> [(b.language, b.body) for b in code_blocks("a\\n```sql\\nSELECT 1\\n```\\n```\\nx\\n```")]
    [('sql', 'SELECT 1'), ('', 'x')]
    """
    blocks: list[CodeBlock] = []
    fences = list(_FENCE.finditer(text))
    i = 0
    while i < len(fences):
        opening = fences[i]
        marker = opening.group(1)
        closing = None
        for j in range(i + 1, len(fences)):
            candidate = fences[j]
            if candidate.group(1)[0] == marker[0] and len(candidate.group(1)) >= len(marker):
                if not candidate.group(2):
                    closing = j
                    break
        body_start = opening.end() + 1
        body_end = len(text) if closing is None else fences[closing].start()
        body = text[body_start:body_end].strip("\n")
        blocks.append(CodeBlock(opening.group(2).lower(), body, opening.start(), body_end))
        if closing is None:
            break
        i = closing + 1
    return blocks


def extract(output: str | None, status: str | None = None) -> Extraction:
    """Apply the extraction rules to one raw model output."""
    if output is None or output.strip() == "null":
        return Extraction(ABSTAIN, None, "the answer is null")
    blocks = code_blocks(output)
    if blocks and is_abstain(blocks[-1].body):
        return Extraction(ABSTAIN, None, "the last code block is ABSTAIN")
    sql_blocks = [b for b in blocks if b.language == "sql"]
    if sql_blocks:
        body = sql_blocks[-1].body.strip()
        if body:
            return Extraction(SQL, body, _RULE_SQL_BLOCK)
    start = _SQL_START.search(output)
    if start is not None:
        for block in blocks:
            if block.start <= start.start() < block.body_end:  # in an untagged block
                sql = output[start.start() : block.body_end].strip()
                return Extraction(SQL, sql, f"{_RULE_FROM_SELECT} to its closing fence")
        sql, cut = sql_before_prose(output[start.start() :])
        to = "to the prose after it" if cut else "to the end"
        return Extraction(SQL, sql, f"{_RULE_FROM_SELECT} {to}")
    if not blocks:
        lines = [line for line in output.strip().splitlines() if line.strip()]
        if lines and is_abstain(lines[-1]):
            return Extraction(ABSTAIN, None, "the last line is ABSTAIN")
    if status == "cut_off":
        return Extraction(CUT_OFF, None, "no SQL and no ABSTAIN; the output hit its limit")
    return Extraction(FORMAT_FAILURE, None, "no SQL and no ABSTAIN in the answer")
