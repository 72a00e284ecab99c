"""Records read ahead: render and transpile in a background thread while the records
before them run their queries.

Reading a record (SqlRender, the transpile to DuckDB with its rules, the reference
answer's transpile) is pure Python and needs no database; checking it waits on the query
process most of its time, and a thread waiting on a pipe lets another run.  One thread
reads the records in their order, so the template cache sees them as it would in one
thread, and the reading of a record is the very one :func:`read_record` gives inline: an
exception is kept and raised where the inline reading would have raised it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from curate.reading.gold import to_duckdb
from curate.reading.templates import TemplateCache
from curate.sources.records import SourceRecord
from curate.transpile.to_duckdb import Transpiled
from curate.verify.gold import Drop


@dataclass(frozen=True)
class Reading:
    """A record's render notes, rendered record (None if the template cache wrote it),
    gold reading and reference answer's reading (None when it has none or it was not
    read ahead)."""

    notes: tuple[str, ...]
    rendered: SourceRecord | None
    gold: Transpiled | Drop
    answer: Transpiled | Drop | BaseException | None = None

    def answer_reading(self) -> Transpiled | Drop:
        """The answer's reading (read now if it was not ahead), raising what its
        transpile raised."""
        if self.answer is None:
            assert self.rendered is not None and self.rendered.answer_sql is not None
            return to_duckdb(self.rendered.answer_sql, self.rendered.answer_dialect, "answer_sql")
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def read_record(
    record: SourceRecord, templates: TemplateCache, *, with_answer: bool = True
) -> Reading:
    """The record's gold read (raising as ``templates.read`` does) and, ``with_answer``,
    its answer's (else it is left None: read when asked, :meth:`Reading.answer_reading`)."""
    notes, rendered, gold = templates.read(record)
    answer: Transpiled | Drop | BaseException | None = None
    if (
        with_answer
        and rendered is not None
        and rendered.answer_sql is not None
        and not isinstance(gold, Drop)
    ):
        try:
            answer = to_duckdb(rendered.answer_sql, rendered.answer_dialect, "answer_sql")
        except Exception as error:  # noqa: BLE001 - raised where the answer is read
            answer = error
    return Reading(notes, rendered, gold, answer)


@contextmanager
def reading_ahead(
    records: Sequence[SourceRecord], templates: TemplateCache
) -> Iterator[list[Future[Reading] | None]]:
    """A future reading per record (None for an unanswerable one: nothing to read), read
    in order by one background thread; what is not yet read is cancelled on leaving."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlgold-read-ahead")
    try:
        yield [pool.submit(read_record, r, templates) if r.answerable else None for r in records]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
