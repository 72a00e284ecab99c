"""Answer extraction: from a model's raw output to SQL, an abstention, or a failure.

The rules of seed 004, in order:

1. JSON ``null`` (``None``) or the string ``"null"`` abstains.
2. If the last fenced code block (any language) holds only the word ``ABSTAIN``, the
   answer abstains.
3. Else the last fenced block tagged ``sql`` is the answer.
4. Else the answer is the text from the first line that starts with ``SELECT`` or
   ``WITH`` (to the end, or to the closing fence when that line sits in an untagged
   block).
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
            return Extraction(SQL, body, "the last ```sql block")
    start = _SQL_START.search(output)
    if start is not None:
        end = len(output)
        for block in blocks:
            if block.start <= start.start() < block.body_end:
                end = block.body_end  # stop at the closing fence of an untagged block
                break
        sql = output[start.start() : end].strip()
        return Extraction(SQL, sql, "the text from the first SELECT/WITH line")
    if not blocks:
        lines = [line for line in output.strip().splitlines() if line.strip()]
        if lines and is_abstain(lines[-1]):
            return Extraction(ABSTAIN, None, "the last line is ABSTAIN")
    if status == "cut_off":
        return Extraction(CUT_OFF, None, "no SQL and no ABSTAIN; the output hit its limit")
    return Extraction(FORMAT_FAILURE, None, "no SQL and no ABSTAIN in the answer")
