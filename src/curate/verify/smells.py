"""Gold smells: what a gold's result or its question suggests is wrong, though every
reference rule holds.  Each is a named rule with its own switch (:class:`SmellRules`)
and a decided action: it drops the record, or it keeps it with a warning that the
report and the review page show.

==================  ======  ==========================================================
rule                action  the gold ...
==================  ======  ==========================================================
duplicate_rows      warn    returns equal rows where its question asks for a list
numbers_as_text     warn    returns a computed text column whose every value is a number
sort_direction      warn    sorts against its question's words ("most", "latest",
                            "oldest" ...)
float_order         warn    returns a floating-point value that changes, past the
                            last bits the profile tolerates or not, when the
                            database's rows are stored in another order
shuffled_copy       drop    returns another result on a copy of the database whose rows
                            are stored in another order
==================  ======  ==========================================================

Why: equal rows may be right (two persons born the same year), numeric codes are text
in the CDM (``concept_code``) and question words are read by a heuristic, so those three
only point a curator at the gold; a float sum that moves in its last bits is still the
same answer under sqlgold's tolerance, but a peer comparing exactly (BIRD, test-suite)
would fail a right answer on another engine, so it warns.  A result that changes with
the order rows are stored in is not the question's answer but the storage's: like a
second run that differs (rule ``deterministic``), it drops.

This module holds the checks of a result and a question (pure); the two that rerun the
gold on a shuffled copy are :mod:`curate.verify.shuffled_copy`.

>>> from score.execution.result import QueryResult
>>> r = QueryResult.from_rows(["name"], [("a",), ("a",), ("b",)])
>>> print(duplicate_rows("List the names of the sites.", r).reason)  # doctest: +ELLIPSIS
the question asks for a list and 1 row(s) of the 3 repeat an earlier row (add DISTINCT, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from curate.verify.smell_names import DROPS, RERUN, SMELLS
from score.execution.result import QueryResult

__all__ = ["DROPS", "RERUN", "SMELLS", "Smell", "SmellRules"]


@dataclass(frozen=True)
class SmellRules:
    """Which gold smells are checked; the two needing a shuffled copy are off unless asked."""

    duplicate_rows: bool = True
    numbers_as_text: bool = True
    sort_direction: bool = True
    float_order: bool = False
    shuffled_copy: bool = False

    @classmethod
    def switched(cls, on: tuple[str, ...] = (), off: tuple[str, ...] = ()) -> SmellRules:
        """The defaults with the smells named in ``on`` and ``off`` switched so.

        >>> SmellRules.switched(on=("shuffled_copy",), off=("sort_direction",)).enabled()
        ('duplicate_rows', 'numbers_as_text', 'shuffled_copy')
        """
        both = set(on) & set(off)
        if both:
            raise ValueError(f"smell {sorted(both)[0]} is both switched on and off")
        unknown = (set(on) | set(off)) - set(SMELLS)
        if unknown:
            raise ValueError(f"unknown smell {sorted(unknown)[0]}; known: {', '.join(SMELLS)}")
        values = {name: getattr(cls(), name) for name in SMELLS}
        values.update({name: True for name in on})
        values.update({name: False for name in off})
        return cls(**values)

    def enabled(self) -> tuple[str, ...]:
        return tuple(name for name in SMELLS if getattr(self, name))

    @property
    def reruns(self) -> bool:
        return self.float_order or self.shuffled_copy


@dataclass(frozen=True)
class Smell:
    rule: str
    reason: str

    @property
    def drops(self) -> bool:
        return DROPS[self.rule]

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "reason": self.reason}


_LIST_WORDS = re.compile(
    r"\b(list|lists|listing|which|what are|show|display|name the|names of|give me|"
    r"enumerate|find all|find the|identify)\b",
    re.IGNORECASE,
)
_COUNT_WORDS = re.compile(r"\b(how many|number of|count)\b", re.IGNORECASE)


def asks_for_a_list(question: str) -> bool:
    """Whether a question asks for a list of things (not a count).

    >>> asks_for_a_list("Which persons had a stroke?"), asks_for_a_list("How many persons?")
    (True, False)
    """
    return bool(_LIST_WORDS.search(question)) and not _COUNT_WORDS.search(question)


def duplicate_rows(question: str | None, result: QueryResult) -> Smell | None:
    """Rule ``duplicate_rows``: equal rows in the result of a question asking for a list."""
    if not question or result.num_rows < 2 or not asks_for_a_list(question):
        return None
    seen: set = set()
    for row in result.rows():
        try:
            seen.add(row)
        except TypeError:  # a LIST or STRUCT cell: its text stands for it
            seen.add(repr(row))
    repeats = result.num_rows - len(seen)
    if repeats <= 0:
        return None
    return Smell(
        "duplicate_rows",
        f"the question asks for a list and {repeats} row(s) of the {result.num_rows} repeat "
        "an earlier row (add DISTINCT, or say why they repeat)",
    )


_NUMBER = r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$"


_AS_TEXT = re.compile(r"\bas (text|a string|strings|varchar)\b", re.IGNORECASE)


def numbers_as_text(
    question: str | None, tree: exp.Expression | None, result: QueryResult
) -> Smell | None:
    """Rule ``numbers_as_text``: a text column the gold computes (not a column of a table
    as stored: codes are text in the CDM) whose every non-NULL value spells a number,
    where the question does not ask for text."""
    if not isinstance(tree, exp.Select) or result.num_rows == 0:
        return None
    if question and _AS_TEXT.search(question):
        return None
    projections = tree.expressions
    if len(projections) != result.num_columns or any(p.is_star for p in projections):
        return None
    for i, projection in enumerate(projections):
        column = result.table.column(i)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            continue
        if isinstance(projection.unalias(), exp.Column) or column.null_count == len(column):
            continue
        if pc.all(pc.match_substring_regex(column.drop_null(), _NUMBER)).as_py():
            return Smell(
                "numbers_as_text",
                f"column {i + 1} ({result.columns[i]!r}) is text whose every value is a number "
                f"({projection.unalias().sql('duckdb')[:80]}): a right answer returning "
                "numbers differs from it under most profiles",
            )
    return None


#: Question words and the direction they ask of a key: by kind of key ("time": dates,
#: years; "amount": counts, ages, values).
_DIRECTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "time": {
        "desc": ("latest", "most recent", "newest", "youngest"),
        "asc": ("earliest", "oldest"),  # not "first": "the first of the last two" is no order
    },
    "amount": {
        "desc": ("most", "highest", "largest", "biggest", "greatest", "top", "maximum",
                 "oldest", "longest"),
        "asc": ("least", "fewest", "lowest", "smallest", "minimum", "youngest", "shortest",
                "rarest"),
    },
}  # fmt: skip
_NOT_A_SORT = re.compile(r"\b(at most|at least|at the most|at the least|most of)\b", re.I)
_TIME_KEY = re.compile(r"(date|time|year|_dt\b|start|end|birth)", re.IGNORECASE)


#: "most recent first" says how to sort, not "first": the word after a direction is not one.
_THEN_FIRST = re.compile(r"\b(recent|latest|newest|oldest|earliest|highest|lowest|largest|"
                         r"smallest|longest|shortest|biggest|greatest|most|least|fewest|"
                         r"descending|ascending)\s+first\b")  # fmt: skip


def _words_in(question: str, words: tuple[str, ...]) -> list[str]:
    text = _THEN_FIRST.sub(r"\1", _NOT_A_SORT.sub(" ", question.lower()))
    return [w for w in words if re.search(rf"\b{re.escape(w)}\b", text)]


def _key_kind(key: exp.Expression) -> str:
    """``time`` for a key of dates or years, ``amount`` for counts, ages and the rest."""
    inner = key.unalias() if isinstance(key, exp.Alias) else key
    if isinstance(inner, exp.Count | exp.Sum | exp.Avg) or inner.find(exp.DateDiff, exp.Sub):
        return "amount"  # a count, a total, a duration
    named = f"{key.alias_or_name} {inner.sql()}"
    if re.search(r"(\bage\b|_age\b|\bage_|days|length|duration)", named, re.IGNORECASE):
        return "amount"
    return "time" if _TIME_KEY.search(named) else "amount"


def sort_direction(question: str | None, tree: exp.Expression | None) -> Smell | None:
    """Rule ``sort_direction``: the gold picks its first rows (ORDER BY ... LIMIT) by a
    first key sorted against what its question's words ask for that kind of key, and
    the question asks only that way.  Without a LIMIT the order only presents the rows
    (a superlative then names a ranking inside the query, not the top-level order).

    >>> import sqlglot
    >>> t = sqlglot.parse_one("SELECT x, COUNT(*) AS n FROM t GROUP BY x ORDER BY n ASC LIMIT 5")
    >>> sort_direction("What are the five most common x?", t).rule
    'sort_direction'
    >>> sort_direction("What are the five least common x?", t) is None
    True
    """
    if not question or not isinstance(tree, exp.Select | exp.SetOperation):
        return None
    order = tree.args.get("order")
    if order is None or not order.expressions or not tree.args.get("limit"):
        return None
    first = order.expressions[0]
    key = first.this
    if isinstance(tree, exp.Select):  # an alias or ordinal names a projection
        if isinstance(key, exp.Literal) and not key.is_string:
            index = int(key.this) - 1
            if 0 <= index < len(tree.expressions):
                key = tree.expressions[index]
        elif isinstance(key, exp.Column) and not key.table:
            for projection in tree.expressions:
                if projection.alias_or_name.lower() == key.name.lower():
                    key = projection
                    break
    kind = _key_kind(key)
    desc_words = _words_in(question, _DIRECTIONS[kind]["desc"])
    asc_words = _words_in(question, _DIRECTIONS[kind]["asc"])
    descending = bool(first.args.get("desc"))
    if descending and asc_words and not desc_words:
        said, asked = asc_words[0], "ascending"
    elif not descending and desc_words and not asc_words:
        said, asked = desc_words[0], "descending"
    else:
        return None
    return Smell(
        "sort_direction",
        f"the question says {said!r}, which asks for an {asked} order of "
        f"{key.sql('duckdb')[:60]} ({kind}); the gold sorts it "
        f"{'descending' if descending else 'ascending'}",
    )
