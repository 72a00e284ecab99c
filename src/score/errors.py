r"""sqlgold's one error tree.

Every error sqlgold raises on purpose is a :class:`SqlgoldError`.  It carries the
pipeline *stage* it happened in and, where known, the file, line and task id, so the
message alone tells a user where to look:

>>> str(SqlgoldError("unknown dialect 'foo'", stage="import", path="a.jsonl", line=3, task_id="q1"))
"[import] a.jsonl:3 (task q1): unknown dialect 'foo'"

The CLI turns any SqlgoldError into one line on stderr and exit code 1: a character
that would break the line or reorder what a terminal shows (a newline in a file name, a
bidi override in a task id) is written as its escape:

>>> print(SqlgoldError("no such file", path="omop\n_tasks.jsonl", task_id="q\u202e1"))
[sqlgold] omop\n_tasks.jsonl (task q\u202e1): no such file
"""

from __future__ import annotations


class SqlgoldError(Exception):
    """An error with the stage it happened in and where."""

    stage: str = "sqlgold"

    def __init__(
        self,
        message: str,
        *,
        stage: str | None = None,
        path: str | None = None,
        line: int | None = None,
        task_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if stage is not None:
            self.stage = stage
        self.path = str(path) if path is not None else None
        self.line = line
        self.task_id = task_id

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
        if self.task_id is not None:
            where = f"{where} (task {self.task_id})".strip()
        return one_line(f"[{self.stage}] {where + ': ' if where else ''}{self.message}")


def one_line(text: str) -> str:
    r"""``text`` with every character that is not printable (a line break, a control or
    bidi character) written as its Python escape.

    >>> print(one_line("a\tb\u2028c"), one_line("plain text"))
    a\tb\u2028c plain text
    """
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


class DatabaseError(SqlgoldError):
    """The OMOP database cannot be built, opened or read."""

    stage = "database"


class InputError(SqlgoldError):
    """An input file is missing, malformed or fails its schema."""

    stage = "input"


class ScoringError(SqlgoldError):
    """Scoring cannot go on (not a failed prediction: those are outcomes)."""

    stage = "score"
