"""SQL Server as sqlgold reads it, on whichever sqlglot build is installed (pure Python or
the compiled ``sqlglotc``): the date-part table, FLOAT as DOUBLE, and what is left alone."""

from __future__ import annotations

import pytest
import sqlglot.parser
from sqlglot import exp, parse_one
from sqlglot.errors import ParseError

from curate.transpile.rules.base import TranspileError
from curate.transpile.rules.tsql_dialect import DATE_PARTS, META_KEY, SqlgoldTSQL
from curate.transpile.to_duckdb import transpile

COMPILED = not sqlglot.parser.__file__.endswith(".py")


def _duckdb(sql: str) -> str:
    return parse_one(sql, read=SqlgoldTSQL).sql("duckdb")


def test_the_dialect_reads_on_the_installed_build() -> None:
    # sqlglotc's parser cannot be subclassed: the dialect must not need to
    assert "Parser" not in vars(SqlgoldTSQL)
    tree = parse_one("SELECT DATEPART(dw, d), CAST(x AS FLOAT) FROM t", read=SqlgoldTSQL)
    marks = [n.meta.get(META_KEY) for n in tree.walk() if n.meta.get(META_KEY)]
    assert sorted(marks) == ["float_is_double", "tsql_date_parts"], f"compiled={COMPILED}"


@pytest.mark.parametrize("part", sorted(DATE_PARTS))
def test_every_date_part_is_read_with_sql_server_s_table(part: str) -> None:
    canonical = DATE_PARTS[part]
    try:
        extract = _duckdb(f"SELECT DATEPART({part}, d)")
    except TranspileError as error:
        assert canonical in ("NANOSECOND", "TZOFFSET") and "no DuckDB counterpart" in str(error)
    else:
        tree = parse_one(f"SELECT DATEPART({part}, d)", read=SqlgoldTSQL)
        assert isinstance(tree.selects[0], exp.Extract), extract
    try:
        tree = parse_one(f"SELECT DATEADD({part}, 1, d)", read=SqlgoldTSQL)
    except TranspileError as error:
        assert canonical in ("NANOSECOND", "ISO_WEEK", "TZOFFSET"), str(error)
    else:
        step = {"DAYOFYEAR": "DAY", "WEEKDAY": "DAY"}.get(canonical, canonical)
        added = tree.selects[0]
        assert isinstance(added, exp.DateAdd) and added.unit.name == step
        assert added.meta[META_KEY] == "tsql_date_parts"


def test_date_functions_as_sql_server_means_them() -> None:
    assert _duckdb("SELECT DATEADD(y, 1, d)") == "SELECT d + INTERVAL 1 DAY"
    assert _duckdb("SELECT DATEPART(w, d)") == "SELECT EXTRACT(DAYOFWEEK FROM d)"
    assert _duckdb("SELECT DATENAME(month, d)") == "SELECT STRFTIME(d, '%B')"
    assert _duckdb("SELECT DATENAME(quarter, d)") == (
        "SELECT CAST(EXTRACT(QUARTER FROM d) AS TEXT)"
    )
    assert "CAST('1900-01-02' AS DATE)" in _duckdb("SELECT DATEDIFF(day, 1, d)")
    nested = "SELECT DATEPART(dw, DATEADD(hh, 2, DATEADD(dy, 1, d)))"
    assert _duckdb(nested) == "SELECT EXTRACT(DAYOFWEEK FROM d + INTERVAL 1 DAY + INTERVAL 2 HOUR)"
    with pytest.raises(TranspileError, match="unknown SQL Server date part 'bogus'"):
        _duckdb("SELECT DATEADD(bogus, 1, d)")


def test_float_is_double_and_real_stays_32_bit() -> None:
    sql = (
        "SELECT CAST(a AS FLOAT), CAST(b AS REAL), CAST(c AS FLOAT(24)), CAST(d AS float(53)), "
        "CONVERT(FLOAT, e), CAST(f AS DOUBLE PRECISION)"
    )
    assert _duckdb(sql) == (
        "SELECT CAST(a AS DOUBLE), CAST(b AS REAL), CAST(c AS REAL), CAST(d AS DOUBLE), "
        "TRY_CAST(e AS DOUBLE), CAST(f AS DOUBLE)"
    )
    created = parse_one("CREATE TABLE #t (a FLOAT, b REAL)", read=SqlgoldTSQL)
    kinds = [c.args["kind"].this for c in created.find_all(exp.ColumnDef)]
    assert kinds == [exp.DType.DOUBLE, exp.DType.FLOAT]
    assert transpile("SELECT CAST(1 AS FLOAT) AS x").rules == ("float_is_double",)


def test_names_and_other_functions_are_left_alone() -> None:
    assert _duckdb("SELECT t.float, dateadd FROM t") == "SELECT t.float, dateadd FROM t"
    called = parse_one("SELECT dbo.DATEADD(day, 1, d)", read=SqlgoldTSQL)
    assert called.find(exp.Anonymous).name == "DATEADD" and not called.find(exp.DateAdd)
    assert not any(n.meta.get(META_KEY) for n in called.walk())


def test_a_malformed_call_is_a_parse_error_at_the_function() -> None:
    with pytest.raises(ParseError, match="Required keyword") as caught:
        parse_one("SELECT\n  DATEADD(day, 1)", read=SqlgoldTSQL)
    assert caught.value.errors[0]["line"] == 2
    with pytest.raises(ParseError, match="maximum number of supported arguments"):
        parse_one("SELECT DATEADD(day, 1, d, e)", read=SqlgoldTSQL)
    with pytest.raises(TranspileError, match="cannot parse the tsql SQL: .*DATEADD"):
        transpile("SELECT DATEADD(day, 1)")
