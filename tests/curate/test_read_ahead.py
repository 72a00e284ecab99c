"""Records read ahead in a background thread give the very verdicts and tasks of records
read inline, drops and raised errors included."""

from __future__ import annotations

import contextlib

import pytest

import curate.pipeline as pipeline
from curate.pipeline import curate_records
from curate.reading.ahead import read_record
from curate.reading.gold import read_gold
from curate.reading.templates import TemplateCache
from curate.sources.load import load_sources
from curate.sources.records import SourceRecord
from tests.paths import PROJECT_SOURCE


def _records() -> list[SourceRecord]:
    records = load_sources(PROJECT_SOURCE, "jsonl")[0][::9]
    odd = [
        SourceRecord(id="z-bad-gold", question="q", gold_sql="SELEC 1", gold_dialect="tsql"),
        SourceRecord(
            id="z-bad-answer",
            question="q",
            gold_sql="SELECT 1 AS x",
            gold_dialect="tsql",
            answer_sql="SELECT FROM WHERE (",
            answer_dialect="duckdb",
        ),
    ]
    return [*records, *odd]


def test_read_ahead_gives_the_inline_verdicts(executor, monkeypatch):
    records = _records()
    seen: list[str] = []
    ahead = curate_records(records, executor, progress=lambda r: seen.append(r.id))
    assert seen == [r.id for r in records]  # each record's progress, in order

    @contextlib.contextmanager
    def inline(records, templates):
        yield [None] * len(records)

    monkeypatch.setattr(pipeline, "reading_ahead", inline)
    assert curate_records(records, executor) == ahead
    verdicts = {v.id: v for v in ahead[1]}
    assert verdicts["z-bad-gold"].status == "dropped"
    assert verdicts["z-bad-answer"].stage == "answer"


def test_an_answer_whose_reading_raises_raises_where_it_is_read(monkeypatch):
    """An unexpected error in the answer's transpile is kept, and raised when the answer
    is read (after the gold's checks), as reading it inline raises it there."""
    import curate.reading.ahead

    def broken(sql, dialect, field):  # read_ahead's to_duckdb reads answers only
        raise RuntimeError("transpiler bug")

    monkeypatch.setattr(curate.reading.ahead, "to_duckdb", broken)
    rec = SourceRecord(
        id="r",
        question="q",
        gold_sql="SELECT 1 AS x",
        gold_dialect="duckdb",
        answer_sql="SELECT 1 AS x",
        answer_dialect="duckdb",
    )
    reading = read_record(rec, TemplateCache(read_gold, enabled=False))
    assert isinstance(reading.answer, RuntimeError)
    with pytest.raises(RuntimeError, match="transpiler bug"):
        reading.answer_reading()
    later = read_record(rec, TemplateCache(read_gold, enabled=False), with_answer=False)
    assert later.answer is None
    with pytest.raises(RuntimeError, match="transpiler bug"):
        later.answer_reading()  # read now: the same error
