"""Answer extraction (seed 004): the last ```sql block, else the first SELECT/WITH line;
ABSTAIN in the last code block or, without blocks, on the last line; null abstains."""

from __future__ import annotations

import pytest

from score.scoring.extract import ABSTAIN, CUT_OFF, FORMAT_FAILURE, SQL, code_blocks, extract

CASES = [
    # (output, status, kind, sql)
    ("```sql\nSELECT 1\n```", None, SQL, "SELECT 1"),
    ("First try:\n```sql\nSELECT 1\n```\nBetter:\n```sql\nSELECT 2\n```", None, SQL, "SELECT 2"),
    ("```SQL\nselect 3\n```", None, SQL, "select 3"),
    ("Plain text.\nSELECT a\nFROM t\nWHERE x = 1", None, SQL, "SELECT a\nFROM t\nWHERE x = 1"),
    ("with c as (select 1)\nselect * from c", None, SQL, "with c as (select 1)\nselect * from c"),
    ("```\nSELECT 2\n```\nThat is all.", None, SQL, "SELECT 2"),
    ("The query selects rows:\n  SELECT 4", None, SQL, "SELECT 4"),
    ("```sql\nSELECT 1\n```\n```\nABSTAIN\n```", None, ABSTAIN, None),
    ("```\nABSTAIN\n```\n```sql\nSELECT 3\n```", None, SQL, "SELECT 3"),
    ("```text\nabstain\n```", None, ABSTAIN, None),
    ("The data is not in the database.\nABSTAIN", None, ABSTAIN, None),
    ("ABSTAIN", None, ABSTAIN, None),
    (None, None, ABSTAIN, None),
    ("null", None, ABSTAIN, None),
    ("I would abstain here.", None, FORMAT_FAILURE, None),
    ("```python\nprint('hi')\n```", None, FORMAT_FAILURE, None),
    ("", None, FORMAT_FAILURE, None),
    ("<think>long reasoning that never ends", "cut_off", CUT_OFF, None),
    ("```sql\nSELECT 5\n```", "cut_off", SQL, "SELECT 5"),
    ("```sql\nSELECT 6", "cut_off", SQL, "SELECT 6"),
]


@pytest.mark.parametrize(("output", "status", "kind", "sql"), CASES)
def test_extraction_rules(output, status, kind, sql):
    got = extract(output, status)
    assert (got.kind, got.sql) == (kind, sql)
    assert got.reason


def test_a_word_abstain_inside_prose_is_not_an_abstention():
    assert extract("I will not ABSTAIN from this.").kind == FORMAT_FAILURE


def test_abstain_on_the_last_line_needs_no_code_block():
    # with a code block present, only the last block decides
    assert extract("```python\nx = 1\n```\nABSTAIN").kind == FORMAT_FAILURE


def test_code_blocks_handle_tildes_and_unclosed_fences():
    blocks = code_blocks("~~~sql\nSELECT 1\n~~~\n```sql\nSELECT 2")
    assert [(b.language, b.body) for b in blocks] == [("sql", "SELECT 1"), ("sql", "SELECT 2")]
