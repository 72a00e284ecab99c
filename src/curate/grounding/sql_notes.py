"""The SQL-dialect grounding document: DuckDB for people who write SQL Server SQL.

Much of the OMOP query literature is written for SQL Server; the benchmark runs on
DuckDB.  Each note in :data:`NOTES` names one difference in plain words, shows the
SQL Server habit (as text, never run) and a small DuckDB example that
:func:`run_notes` executes on the database, so the document shows real results.

The transpile fix-up rules that sqlgold applies to SQL Server gold queries are listed
by :func:`render_rules_section` from any sequence of rules having ``name`` and
``description`` (or ``(name, description)`` pairs), such as
``curate.transpile.to_duckdb.RULES``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from curate.grounding.common import (
    ExampleRun,
    code_block,
    markdown_table,
    render_run,
    run_example,
)
from score.execution.executor import Executor


@dataclass(frozen=True)
class SqlNote:
    """One SQL Server -> DuckDB difference: what it is, the old habit, a DuckDB example."""

    title: str
    text: str
    sql_server: str  # shown, not run
    duckdb: str  # run on the database while the document is generated


NOTES: tuple[SqlNote, ...] = (
    SqlNote(
        "Dividing integers",
        "In SQL Server, an integer divided by an integer is an integer: the fraction is "
        "thrown away. In DuckDB `/` always gives a fractional (DOUBLE) result, and `//` "
        "is the operator that divides integers and drops the fraction. A ratio of two "
        "counts is therefore already fractional in DuckDB; write `//` only when the "
        "question really wants the truncated whole number.",
        "SELECT 7 / 2;                          -- 3\n"
        "SELECT COUNT(*) / COUNT(DISTINCT person_id) FROM visit_occurrence;",
        """
SELECT 7 / 2 AS slash, 7 // 2 AS double_slash,
       count(*) / count(DISTINCT person_id) AS visits_per_person,
       count(*) // count(DISTINCT person_id) AS whole_visits_per_person
FROM cdm.visit_occurrence
""",
    ),
    SqlNote(
        "Averages of integer columns",
        "SQL Server's AVG over an integer column returns an integer (truncated). "
        "DuckDB's `avg` always returns a DOUBLE, so no cast is needed to keep the "
        "fraction; round it explicitly if the question asks for a rounded value.",
        "SELECT AVG(year_of_birth) FROM person;            -- a whole number\n"
        "SELECT AVG(CAST(year_of_birth AS FLOAT)) FROM person;",
        """
SELECT avg(year_of_birth) AS mean_year, round(avg(year_of_birth), 1) AS rounded
FROM cdm.person
""",
    ),
    SqlNote(
        "FLOAT, REAL and DOUBLE",
        "In SQL Server FLOAT is an 8-byte floating-point number and REAL a 4-byte one. In "
        "DuckDB FLOAT and REAL both mean the 4-byte type, and DOUBLE is the 8-byte one. "
        "A SQL Server `CAST(x AS FLOAT)` therefore becomes `CAST(x AS DOUBLE)` in DuckDB; "
        "keeping FLOAT loses digits.",
        "SELECT CAST(1 AS FLOAT) / 3;   -- 0.333333333333333 (8 bytes)",
        """
SELECT CAST(1 AS DOUBLE) / 3 AS as_double,
       CAST(CAST(1 AS DOUBLE) / 3 AS FLOAT) AS as_float
""",
    ),
    SqlNote(
        "Casting a fraction to an integer",
        "SQL Server truncates when it casts a fractional number to INT (2.7 becomes 2). "
        "DuckDB rounds to the nearest integer (2.7 becomes 3). Use `trunc` (toward zero) "
        "or `floor` (downward) before the cast to keep SQL Server's result.",
        "SELECT CAST(2.7 AS INT), CAST(-2.7 AS INT);   -- 2, -2",
        """
SELECT CAST(2.7 AS INTEGER) AS cast_rounds,
       CAST(trunc(2.7) AS INTEGER) AS trunc_then_cast,
       CAST(trunc(-2.7) AS INTEGER) AS negative_trunc
""",
    ),
    SqlNote(
        "Joining strings",
        "SQL Server joins strings with `+`. In DuckDB `+` is only arithmetic; join "
        "strings with `||` or `concat(...)`. `||` gives NULL if any part is NULL, while "
        "`concat` skips NULL parts. Both accept numbers and convert them to text.",
        "SELECT gender_source_value + '-' + race_source_value FROM person;",
        """
SELECT person_id,
       gender_source_value || '-' || race_source_value AS with_bars,
       concat('person ', person_id, NULL) AS with_concat
FROM cdm.person
ORDER BY person_id
LIMIT 3
""",
    ),
    SqlNote(
        "Adding to dates (DATEADD)",
        "SQL Server's `DATEADD(unit, n, d)` becomes `d + INTERVAL n unit` (or "
        "`date_add(d, INTERVAL n unit)`) in DuckDB. Adding an INTERVAL to a DATE gives "
        "a TIMESTAMP, so cast back to DATE when a date is wanted; adding a plain integer "
        "to a DATE adds days and stays a DATE. Month arithmetic clamps to the last day "
        "of the month.",
        "SELECT DATEADD(day, 30, visit_start_date), DATEADD(month, 1, '2019-01-31');",
        """
SELECT DATE '2019-01-31' + INTERVAL 30 DAY AS plus_interval,
       CAST(DATE '2019-01-31' + INTERVAL 1 MONTH AS DATE) AS plus_month_as_date,
       DATE '2019-01-31' + 30 AS plus_integer_days
""",
    ),
    SqlNote(
        "Differences between dates (DATEDIFF)",
        "SQL Server's `DATEDIFF(unit, start, end)` becomes `date_diff('unit', start, "
        "end)`: same order, the unit as a string. Both count the unit boundaries crossed "
        "between the dates, so from 31 December to 1 January is one year. For whole "
        "units elapsed, such as a person's age in completed years, use `date_sub` with "
        "the same arguments. Subtracting two DATEs gives the number of days.",
        "SELECT DATEDIFF(year, '2018-12-31', '2019-01-01');   -- 1\n"
        "SELECT DATEDIFF(day, visit_start_date, visit_end_date) FROM visit_occurrence;",
        """
SELECT date_diff('year', DATE '2018-12-31', DATE '2019-01-01') AS boundaries_crossed,
       date_sub('year', DATE '2018-12-31', DATE '2019-01-01') AS whole_years,
       date_diff('day', DATE '2019-01-01', DATE '2019-03-01') AS days,
       DATE '2019-03-01' - DATE '2019-01-01' AS days_by_subtraction
""",
    ),
    SqlNote(
        "Parts of dates (DATEPART, YEAR, DATENAME)",
        "`DATEPART(unit, d)` becomes `date_part('unit', d)` or `extract(unit FROM d)`; "
        "`YEAR(d)`, `MONTH(d)` and `DAY(d)` exist in DuckDB too. `DATENAME` becomes "
        "`dayname(d)` or `monthname(d)`. Weekday numbers differ: SQL Server's "
        "DATEPART(weekday, d) counts Sunday as 1 (with the default settings), DuckDB's "
        "`dayofweek(d)` counts Sunday as 0 and `isodow(d)` counts Monday as 1 and Sunday "
        "as 7.",
        "SELECT DATEPART(year, d), DATEPART(weekday, d), DATENAME(month, d) FROM ...;",
        """
SELECT date_part('year', DATE '2019-03-03') AS year_part,
       extract(month FROM DATE '2019-03-03') AS month_part,
       dayofweek(DATE '2019-03-03') AS sunday_is_0,
       isodow(DATE '2019-03-03') AS sunday_is_7,
       dayname(DATE '2019-03-03') AS day_name,
       monthname(DATE '2019-03-03') AS month_name
""",
    ),
    SqlNote(
        "TOP becomes LIMIT",
        "`SELECT TOP n ...` becomes `... LIMIT n` at the end of the query, after ORDER "
        "BY. Without ORDER BY the rows LIMIT keeps are arbitrary. For TOP n WITH TIES, "
        "rank the rows with a window function and keep ranks up to n (DuckDB's `QUALIFY` "
        "filters on a window function directly).",
        "SELECT TOP 3 person_id, year_of_birth FROM person ORDER BY year_of_birth, person_id;",
        """
SELECT person_id, year_of_birth
FROM cdm.person
ORDER BY year_of_birth, person_id
LIMIT 3
""",
    ),
    SqlNote(
        "ISNULL becomes COALESCE",
        "SQL Server's two-argument `ISNULL(x, fallback)` becomes `coalesce(x, fallback)` "
        "(or `ifnull(x, fallback)`). In DuckDB `ISNULL` is not that function: `x ISNULL` "
        "is a test that returns true or false, like `x IS NULL`.",
        "SELECT ISNULL(location_id, -1) FROM person;",
        """
SELECT person_id, location_id,
       coalesce(location_id, -1) AS with_fallback,
       location_id IS NULL AS is_missing
FROM cdm.person
WHERE location_id IS NULL
ORDER BY person_id
LIMIT 3
""",
    ),
    SqlNote(
        "CONVERT styles become strftime and strptime",
        "SQL Server formats and parses dates with `CONVERT(type, value, style)`. In "
        "DuckDB `strftime(d, format)` turns a date into text and `strptime(text, format)` "
        "reads text as a TIMESTAMP (cast it to DATE). Common styles: 112 is `%Y%m%d`, 23 "
        "and 120 start with `%Y-%m-%d`, 101 is `%m/%d/%Y`, 103 is `%d/%m/%Y`.",
        "SELECT CONVERT(varchar(8), visit_start_date, 112);\n"
        "SELECT CONVERT(date, '20190305', 112);",
        """
SELECT strftime(DATE '2019-03-05', '%Y%m%d') AS style_112,
       strftime(DATE '2019-03-05', '%m/%d/%Y') AS style_101,
       CAST(strptime('20190305', '%Y%m%d') AS DATE) AS parsed_112
""",
    ),
    SqlNote(
        "Date literals",
        "Write a date as `DATE 'YYYY-MM-DD'`. DuckDB compares a DATE column with an ISO "
        "string such as '2018-01-01' by converting the string, but it does not read "
        "SQL Server's compact 'YYYYMMDD' form as a date: parse that with `strptime` or "
        "build the date with `make_date(year, month, day)` (SQL Server's "
        "DATEFROMPARTS).",
        "SELECT COUNT(*) FROM visit_occurrence WHERE visit_start_date >= '20180101';",
        """
SELECT count(*) FILTER (WHERE visit_start_date >= DATE '2018-01-01') AS typed_literal,
       count(*) FILTER (WHERE visit_start_date >= make_date(2018, 1, 1)) AS from_parts
FROM cdm.visit_occurrence
""",
    ),
    SqlNote(
        "String comparison is case-sensitive",
        "SQL Server databases usually compare text without regard to case, so 'm' equals "
        "'M'. In DuckDB `=`, `IN` and `LIKE` are case-sensitive. Compare `lower(...)` "
        "of both sides, or use `ILIKE` for patterns, when case should not matter.",
        "SELECT COUNT(*) FROM person WHERE gender_source_value = 'm';",
        """
SELECT count(*) FILTER (WHERE gender_source_value = 'm') AS exact_case,
       count(*) FILTER (WHERE lower(gender_source_value) = 'm') AS any_case,
       count(*) FILTER (WHERE gender_source_value ILIKE 'm') AS with_ilike
FROM cdm.person
""",
    ),
    SqlNote(
        "GETDATE and a fixed today",
        "`GETDATE()` becomes `current_date` (a DATE) or `now()` (a timestamp). An "
        "answer that depends on today changes every day, so sqlgold's executor can fix "
        "today (its `--today YYYY-MM-DD` option): `current_date`, `now()`, `GETDATE()` "
        "and the like are replaced by that day before the query runs. This document's "
        "examples ran with today fixed to {today}.",
        "SELECT GETDATE();\nSELECT DATEDIFF(year, birth_datetime, GETDATE()) FROM person;",
        """
SELECT current_date AS today,
       date_sub('year', DATE '2000-06-15', current_date) AS whole_years_since
""",
    ),
    SqlNote(
        "Renamed functions",
        "Several SQL Server functions have other names in DuckDB: `LEN` is `length`; "
        "`CHARINDEX(part, text)` is `strpos(text, part)` (the arguments swap); `IIF` is "
        "`if(...)` or a CASE expression; `EOMONTH` is `last_day`; `STDEV` is "
        "`stddev_samp`; `COUNT_BIG` is `count`. `LEFT`, `RIGHT`, `SUBSTRING`, `NULLIF` "
        "and `ROUND` exist under the same names.",
        "SELECT LEN('sinusitis'), CHARINDEX('it', 'sinusitis'), IIF(1 > 0, 'y', 'n'),\n"
        "       EOMONTH('2019-02-10');",
        """
SELECT length('sinusitis') AS len,
       strpos('sinusitis', 'it') AS charindex,
       if(1 > 0, 'y', 'n') AS iif,
       last_day(DATE '2019-02-10') AS eomonth
""",
    ),
    SqlNote(
        "Temporary tables and bracketed names",
        "A benchmark answer is one read-only SELECT: no `#temp` tables, no "
        "`SELECT ... INTO`. Put intermediate steps in a `WITH` clause (a common table "
        "expression) instead. Quote unusual names with double quotes, not SQL Server's "
        "square brackets.",
        "SELECT person_id INTO #diabetics FROM condition_occurrence\n"
        "WHERE condition_concept_id = 201826;\n"
        "SELECT COUNT(*) FROM #diabetics;",
        """
WITH diabetics AS (
  SELECT DISTINCT person_id
  FROM cdm.condition_occurrence
  WHERE condition_concept_id = 201826
)
SELECT count(*) AS "number of persons"
FROM diabetics
""",
    ),
)


def run_notes(executor: Executor, notes: tuple[SqlNote, ...] = NOTES) -> tuple[ExampleRun, ...]:
    """Run every note's DuckDB example (raises GroundingError if one fails or is empty)."""
    return tuple(run_example(executor, n.duckdb, what=f"SQL note {n.title!r}") for n in notes)


# -- rendering (pure) ---------------------------------------------------------------


def render_sql_notes(
    runs: tuple[ExampleRun, ...],
    today: dt.date,
    rules: Iterable[Any] | None = None,
    notes: tuple[SqlNote, ...] = NOTES,
) -> str:
    """The dialect document: the notes with their runs, then the transpile rules if given."""
    if len(runs) != len(notes):
        raise ValueError(f"{len(runs)} runs for {len(notes)} notes")
    parts = [_intro()]
    for note, run in zip(notes, runs, strict=True):
        parts.append(
            f"## {note.title}\n\n{note.text.replace('{today}', today.isoformat())}\n\n"
            f"SQL Server habit (not run):\n\n{code_block(note.sql_server)}\n\n"
            f"DuckDB, run on the benchmark database:\n\n{render_run(run)}"
        )
    if rules is not None:
        parts.append(render_rules_section(rules))
    return "\n\n".join(parts) + "\n"


def _intro() -> str:
    return "\n".join(
        [
            "# DuckDB SQL for people used to SQL Server",
            "",
            "The benchmark's queries run on DuckDB, over the OMOP tables `cdm.<table>`. "
            "Much published OMOP SQL is written for SQL Server, and a few of its habits "
            "give errors or, worse, different answers in DuckDB. Each section below names "
            "one difference, shows the SQL Server habit, and a DuckDB query that was run "
            "on the benchmark database when this document was generated, with its result.",
            "",
            "Generated by `sqlgold grounding`; do not edit by hand.",
        ]
    )


def render_rules_section(rules: Iterable[Any]) -> str:
    """A section listing transpile rules: each has ``name`` and ``description``
    attributes (or keys), or is a ``(name, description)`` pair.

    >>> text = render_rules_section([("top_to_limit", "TOP n becomes LIMIT n.")])
    >>> for line in text.splitlines()[-3:]:
    ...     print(line)
    | rule | what it does |
    |---|---|
    | `top_to_limit` | TOP n becomes LIMIT n. |
    """
    rows = [_rule_pair(r) for r in rules]
    return (
        "## What sqlgold's transpiler changes\n\n"
        "When sqlgold turns a gold query written for SQL Server (or PostgreSQL) into "
        "DuckDB SQL, it translates it with sqlglot and then applies these named fix-up "
        "rules, in this order; each changes a query only where its case occurs:\n\n"
        + markdown_table(
            ["rule", "what it does"], [(f"`{n}`", d.replace("|", "\\|")) for n, d in rows]
        )
    )


def _rule_pair(rule: Any) -> tuple[str, str]:
    """(name, one-line description) of a rule given as a pair, a mapping, an object
    with ``name`` and ``description``, or a function (its name and docstring)."""
    if isinstance(rule, dict):
        return str(rule["name"]), str(rule["description"])
    if isinstance(rule, tuple | list) and len(rule) == 2:
        return str(rule[0]), str(rule[1])
    if hasattr(rule, "name") and hasattr(rule, "description"):
        return str(rule.name), str(rule.description)
    if callable(rule) and hasattr(rule, "__name__"):
        doc = (rule.__doc__ or "").strip().splitlines()
        return rule.__name__, doc[0] if doc else ""
    raise TypeError(f"cannot read a rule name and description from {rule!r}")
