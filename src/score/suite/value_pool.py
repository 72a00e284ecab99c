"""The values a database variant is made of: the base database's own and the golds'.

For every column of a clinical table, a pool: its most frequent values in the base
database, then what the golds compare it with (a number and +-1, a date and +-1 day, a
string and a near miss of it, a string that matches a LIKE pattern and one that almost
does).  Concept ids a gold names (or selects from the vocabulary by name, code, class or
vocabulary) join the pools of the concept-id columns of their domain, with their
ancestors and descendants, so a variant has rows that hit a filter and rows just beside
it.  An age compared with a constant puts the birth years on either side of it; a number
of days (``DATE_DIFF(...) >= 13``, ``+ INTERVAL '30' DAY``) gives spans of that many days
and one less or more, and a count a HAVING compares with gives as many rows per person.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import duckdb
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.cdm.schema import CDM_COLUMN_TYPES, CDM_TABLES, bigint_id_type
from score.execution.fixed_today import pin_today, uses_current_time
from score.suite.crowd import counts_persons

Pools = dict[tuple[str, str], list[Any]]

#: how many of a column's most frequent base values each pool starts with
BASE_VALUES = 6
#: how many concepts a gold's filter on the vocabulary may add
CONCEPTS_PER_FILTER = 12
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
#: a time of day, alone or in a timestamp: what a row's datetime may hold beside its day
_CLOCK = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T])?\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")
#: the longest span of days a gold's constant gives (a century)
MAX_SPAN = 36525
#: pseudo-columns of a pool: the day spans and the per-person row counts a gold names
SPANS = ("*", "span")
COUNTS = ("*", "count")
PERSONS = ("*", "persons")
#: a focus key's prefix for the concepts a gold names itself (no family, no local ones)
OWN = "*own:"
_COMPARE = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
#: the concept table's columns whose filters select the concepts a variant's rows use
_CONCEPT_FILTER_COLUMNS = ("concept_name", "concept_code", "concept_class_id", "vocabulary_id")
#: ... and those whose filters only local concepts miss (:mod:`score.suite.local_concepts`):
#: a domain selects too many concepts, a validity date too few, to pick rows from
_LOCAL_FILTER_COLUMNS = ("domain_id", "valid_start_date", "valid_end_date")


def _columns(table: str) -> dict[str, str]:
    return CDM_COLUMN_TYPES[table]


def _day_column(table: str, column: str) -> str | None:
    """The DATE column that gives a ``*_datetime`` column its day (None for another).

    >>> _day_column("measurement", "measurement_datetime")
    'measurement_date'
    """
    if not column.endswith("_datetime"):
        return None
    day = column.removesuffix("_datetime") + "_date"
    return day if day in _columns(table) else None


def _owner(column: exp.Column, tables: Mapping[str, str]) -> str | None:
    if column.table:
        return tables.get(column.table)
    owners = {t for t in tables.values() if column.name in _columns(t)}
    return owners.pop() if len(owners) == 1 else None


def _literal_value(node: exp.Expr) -> Any:
    if isinstance(node, exp.Cast):
        node = node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        value = _literal_value(node.this)
        return -value if isinstance(value, (int, float)) else None
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return node.name
    try:
        return int(node.name)
    except ValueError:
        return float(node.name)


#: What a constant relative to today may be made of (no column, table or other call).
_DATE_ARITHMETIC = (
    exp.Literal,
    exp.Cast,
    exp.DataType,
    exp.DataTypeParam,
    exp.Interval,
    exp.Var,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Paren,
    exp.Neg,
    exp.DateTrunc,
    exp.TimestampTrunc,
    exp.DateAdd,
    exp.DateSub,
    exp.DateFromParts,  # MAKE_DATE(EXTRACT(YEAR FROM CURRENT_DATE) - 1, 11, 3)
    exp.Extract,
)


def today_relative(node: exp.Expr, today: dt.date) -> str | int | None:
    """The day a constant relative to today stands for (``CURRENT_DATE - INTERVAL '3'
    MONTHS``, ``DATE_TRUNC('MONTH', now())``), as ``YYYY-MM-DD`` (``YYYY-MM-DD HH:MM:SS``
    where the arithmetic adds a time of day), with ``today`` the day the gold runs with;
    a whole number where the arithmetic gives one (``EXTRACT(YEAR FROM CURRENT_DATE)``,
    which a gold compares with ``EXTRACT(YEAR FROM visit_start_datetime)``); None for
    anything else.

    It is computed by an in-memory DuckDB that may read nothing, once the clock calls are
    pinned (:func:`score.execution.fixed_today.pin_today`) and only date arithmetic is
    left.

    >>> from sqlglot import parse_one
    >>> today_relative(parse_one("CURRENT_DATE - INTERVAL '3' MONTH"), dt.date(2026, 1, 1))
    '2025-10-01'
    >>> new_year_eve = parse_one("DATE_TRUNC('YEAR', now()) - INTERVAL '1' DAY")
    >>> today_relative(new_year_eve, dt.date(2026, 5, 2))
    '2025-12-31'
    >>> today_relative(parse_one("CURRENT_DATE + INTERVAL '3' HOURS"), dt.date(2026, 1, 1))
    '2026-01-01 03:00:00'
    >>> today_relative(parse_one("EXTRACT(YEAR FROM CURRENT_DATE) - 1"), dt.date(2026, 1, 1))
    2025
    >>> today_relative(parse_one("x - INTERVAL '3' MONTH"), dt.date(2026, 1, 1))
    """
    if not uses_current_time(node):
        return None
    pinned, _ = pin_today(node, today)
    if not all(isinstance(n, _DATE_ARITHMETIC) for n in pinned.walk()):
        return None
    con = duckdb.connect(config={"enable_external_access": False})
    text = pinned.sql("duckdb")
    try:
        row = con.execute(f"SELECT ({text}), TRY_CAST(({text}) AS TIMESTAMP)").fetchone()
    except duckdb.Error:
        return None
    finally:
        con.close()
    if not row:
        return None
    value, at = row
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # a year, a month: compared with a part of a column's date
    if not isinstance(at, dt.datetime):
        return None
    # a time of day only where the arithmetic gives one (+ INTERVAL '3' HOURS)
    return at.date().isoformat() if at.time() == dt.time(0) else at.isoformat(" ")


def _constant(node: exp.Expr | None, today: dt.date) -> Any:
    """A literal's value, or the day a constant relative to today stands for; else None."""
    if node is None:
        return None
    value = _literal_value(node)
    return value if value is not None else today_relative(node, today)


def _near(value: Any, dtype: str) -> list[Any]:
    """``value`` made a value of a column of type ``dtype``, and its neighbours."""
    bits = {"INTEGER": 31, "BIGINT": 63}.get(dtype)
    if bits and isinstance(value, int) and not -(2**bits) < value < 2**bits - 1:
        return []  # no column of that type holds it
    if dtype in ("INTEGER", "BIGINT", "DOUBLE") and isinstance(value, (int, float)):
        step = 1 if bits or float(value).is_integer() else abs(value) * 0.01 or 0.01
        kind = int if bits else float
        return [kind(value), kind(value - step), kind(value + step)]
    if dtype in ("DATE", "TIMESTAMP") and isinstance(value, int) and 1800 <= value <= 2200:
        # YEAR(a_date) = 2017: the year's first and last days, and the days beside them
        return [
            dt.date(value, 1, 1),
            dt.date(value, 12, 31),
            dt.date(value - 1, 12, 31),
            dt.date(value + 1, 1, 1),
        ]
    if dtype == "TIMESTAMP" and isinstance(value, str) and _CLOCK.match(value):
        # a time of day (CAST(x AS TIME) = '02:18:31', or a timestamp's): that time and
        # a second either side, for the datetime a row's day is given
        try:
            at = dt.datetime.fromisoformat(value if _DATE.match(value) else f"2000-01-01 {value}")
        except ValueError:
            return []
        second = dt.timedelta(seconds=1)
        return [t.time() for t in (at, at - second, at + second)]
    if dtype in ("DATE", "TIMESTAMP") and isinstance(value, str) and _DATE.match(value):
        try:
            day = dt.date.fromisoformat(value[:10])
        except ValueError:
            return []
        one = dt.timedelta(days=1)
        return [day, day - one, day + one]
    if dtype == "VARCHAR" and isinstance(value, str):
        return [value, value[:-1] if len(value) > 1 else value + "x"]
    return []


def _like_values(pattern: str) -> list[str]:
    """A string that matches ``pattern`` and one that almost does."""
    match = pattern.replace("%", "").replace("_", "a")
    core = pattern.strip("%")
    near = match[:-1] if len(match) > 1 else match + "x"
    if pattern.startswith("%") and not pattern.endswith("%"):
        near = match + "x"
    elif pattern.endswith("%") and not pattern.startswith("%"):
        near = "x" + match
    return [match, "pre " + match + " post" if core else match, near]


def _is_age(side: exp.Expr) -> bool:
    return any(c.name == "year_of_birth" for c in side.find_all(exp.Column)) and (
        side.find(exp.Sub) is not None
    )


def gold_constants(
    golds: Iterable[str], *, today: dt.date, todays: Sequence[dt.date | None] = ()
) -> tuple[Pools, set[int], list[dict]]:
    """What the golds compare columns with: (table, column) -> values (each with its
    neighbours), the concept ids they name, and their filters on the concept table
    (column -> value) to look up in the vocabulary.  ``todays`` is each gold's own
    today where it has one (``today`` otherwise): what its current date stands for."""
    pools: Pools = defaultdict(list)
    concepts: set[int] = set()
    filters: list[dict] = []
    for number, sql in enumerate(golds):
        day = (todays[number] if number < len(todays) else None) or today
        try:
            tree = parse_one(sql, read="duckdb")
        except SqlglotError:
            continue
        tables = {t.alias_or_name: t.name for t in tree.find_all(exp.Table) if t.name in CDM_TABLES}
        years = {day.year} | {
            int(lit.name[:4])
            for lit in tree.find_all(exp.Literal)
            if lit.is_string and _DATE.match(lit.name)
        }
        for node in tree.walk():
            pairs: list[tuple[exp.Expr, list[Any], bool]] = []
            if isinstance(node, exp.Interval) and node.text("unit").upper() in ("DAY", "DAYS"):
                # d + INTERVAL '30' DAY: two dates that far apart, and a day less or more
                days = node.this.name if isinstance(node.this, exp.Literal) else ""
                if days.isdigit() and int(days) <= 1000:
                    pools[SPANS] += [int(days) - 1, int(days), int(days) + 1]
            if isinstance(node, _COMPARE):
                for side, other in ((node.this, node.expression), (node.expression, node.this)):
                    value = _constant(other, day)
                    if value is not None:
                        pairs.append((side, [value], False))
            elif isinstance(node, exp.In) and node.expressions:
                values = [_literal_value(v) for v in node.expressions]
                pairs.append((node.this, [v for v in values if v is not None], False))
            elif isinstance(node, exp.Between):
                values = [_constant(node.args.get(k), day) for k in ("low", "high")]
                pairs.append((node.this, [v for v in values if v is not None], False))
            elif isinstance(node, (exp.Like, exp.ILike)):
                value = _literal_value(node.expression)
                if isinstance(value, str):
                    pairs.append((node.this, [value], True))
            for side, values, like in pairs:
                if (
                    _is_age(side)
                    and "person" in tables.values()
                    and not isinstance(side, exp.Column)
                ):
                    for v in values:
                        if isinstance(v, int) and 0 <= v <= 130:
                            for year in years:
                                pools[("person", "year_of_birth")] += [
                                    year - v - 1,
                                    year - v,
                                    year - v + 1,
                                ]
                    continue
                ints = [v for v in values if isinstance(v, int) and 0 <= v <= 1000]
                days = [v for v in values if isinstance(v, int) and 0 <= v <= MAX_SPAN]
                if days and side.find(exp.DateDiff, exp.Sub) is not None:
                    # a span of days (DATE_DIFF(...) >= 13, or 18250 for fifty years of an
                    # observation period): spans on either side of it
                    pools[SPANS] += [d for v in days for d in (v - 1, v, v + 1) if d >= 0]
                if ints and side.find(exp.Count) is not None:
                    # HAVING COUNT(*) > 20: as many rows per person, and one fewer or more
                    pools[COUNTS] += [d for v in ints for d in (v - 1, v, v + 1) if 0 < d <= 40]
                    if counts_persons(side):  # COUNT(DISTINCT person_id) < 200: a crowd
                        pools[PERSONS] += [d for v in ints for d in (v - 1, v, v + 1) if d > 0]
                if not isinstance(side, exp.Column):
                    side = side.find(exp.Column)  # e.g. YEAR(x) = 2019, LOWER(x) = 'y'
                    if side is None:
                        continue
                table = _owner(side, tables)
                if table is None:
                    continue
                dtype = _columns(table).get(side.name)
                if dtype is None:
                    continue
                dtype = bigint_id_type(side.name, dtype)  # the variants' ids are 64-bit
                for v in values:
                    if side.name.endswith("concept_id") and isinstance(v, int):
                        concepts.add(v)
                    if table == "concept" and side.name in (
                        _CONCEPT_FILTER_COLUMNS + _LOCAL_FILTER_COLUMNS
                    ):
                        filters.append({"column": side.name, "value": v, "like": like})
                    if like and isinstance(v, str):
                        pools[(table, side.name)] += _like_values(v)
                    else:
                        pools[(table, side.name)] += _near(v, dtype)
                        day_column = _day_column(table, side.name)
                        if day_column:  # a row's datetime is its day's: the day goes there
                            pools[(table, day_column)] += _near(v, "DATE")
    return dict(pools), concepts, filters


def base_pools(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> Pools:
    """Each column's most frequent values in the base database (ties by value)."""
    pools: Pools = {}
    for table in tables:
        for column in _columns(table):
            rows = con.execute(
                f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL '
                f"GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT {BASE_VALUES}"
            ).fetchall()
            pools[(table, column)] = [r[0] for r in rows]
    return pools


def concept_domains(con: duckdb.DuckDBPyConnection, pools: Pools) -> dict[tuple[str, str], str]:
    """The domain of each concept-id column: that of most of its base values."""
    found = {}
    for key, values in pools.items():
        if not key[1].endswith("concept_id") or not values:
            continue
        row = con.execute(
            "SELECT domain_id FROM concept WHERE concept_id IN "
            f"({', '.join(str(int(v)) for v in values)}) "
            "GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
        ).fetchall()
        if row:
            found[key] = row[0][0]
    return found


def related_concepts(
    con: duckdb.DuckDBPyConnection, named: set[int], filters: Sequence[dict]
) -> dict[str, list[int]]:
    """Domain -> concept ids: those named, those a filter on the vocabulary selects (and
    a few it does not), with their ancestors and descendants; in id order."""
    ids = set(named)
    for f in filters:
        column, value = f["column"], f["value"]
        if column not in _CONCEPT_FILTER_COLUMNS:
            continue
        if f["like"]:
            where, params = f'"{column}" ILIKE ?', [value]
        else:
            where, params = f'"{column}" = ?', [value]
        rows = con.execute(
            f"SELECT concept_id FROM concept WHERE {where} ORDER BY concept_id "
            f"LIMIT {CONCEPTS_PER_FILTER}",
            params,
        ).fetchall()
        ids |= {r[0] for r in rows}
        # ... and a few of the same domains that the filter does not select
        others = con.execute(
            f"SELECT concept_id FROM concept WHERE NOT ({where}) AND domain_id IN "
            f"(SELECT domain_id FROM concept WHERE {where}) ORDER BY concept_id "
            f"LIMIT {CONCEPTS_PER_FILTER // 3}",
            params + params,
        ).fetchall()
        ids |= {r[0] for r in others}
    if not ids:
        return {}
    listed = ", ".join(str(int(i)) for i in sorted(ids))
    family = con.execute(
        "SELECT descendant_concept_id FROM concept_ancestor "
        f"WHERE ancestor_concept_id IN ({listed}) "
        "UNION SELECT ancestor_concept_id FROM concept_ancestor "
        f"WHERE descendant_concept_id IN ({listed})"
    ).fetchall()
    ids |= {r[0] for r in family}
    listed = ", ".join(str(int(i)) for i in sorted(ids))
    by_domain: dict[str, list[int]] = defaultdict(list)
    for concept_id, domain in con.execute(
        f"SELECT concept_id, domain_id FROM concept WHERE concept_id IN ({listed}) "
        "ORDER BY concept_id"
    ).fetchall():
        by_domain[domain].append(concept_id)
    return dict(by_domain)


def merged_pools(
    base: Pools,
    gold: Mapping[tuple[str, str], Sequence[Any]],
    domains: Mapping[tuple[str, str], str],
    concepts: Mapping[str, Sequence[int]],
    known: set[int] | None = None,
) -> Pools:
    """Each column's pool: base values, then the golds' values and the related concepts
    of its domain; each value once, in that order.  A concept-id column takes only ids
    in ``known`` (the vocabulary's) from the golds, and concept 0 ("No matching
    concept", which the CDM puts where a source value maps to no concept) where the base
    fills it at all."""
    out: Pools = {}
    for key, values in base.items():
        extra = list(gold.get(key, ()))
        if key in domains:
            extra += list(concepts.get(domains[key], ()))
        if key[1].endswith("concept_id") and values:
            extra.append(0)
        if key[1].endswith("concept_id") and known is not None:
            # a concept id is a foreign key into the vocabulary, as in any real CDM
            extra = [v for v in extra if v in known]
        out[key] = list(dict.fromkeys([*values, *extra]))
    return out
