"""The canonical result hash: the same values hash the same whatever their types."""

from __future__ import annotations

import decimal

import duckdb
import pyarrow as pa
import pytest

from score.comparison.result_hash import canonical_rows, number_text, result_sha256
from score.execution.result import QueryResult


def _duck(sql: str) -> QueryResult:
    con = duckdb.connect()
    try:
        return QueryResult.from_arrow(con.sql(sql).to_arrow_table())
    finally:
        con.close()


@pytest.mark.parametrize(
    ("left", "right"),
    [
        # AVG is DOUBLE in DuckDB and NUMERIC in PostgreSQL
        ("SELECT AVG(x) AS a FROM range(1, 5) t(x)", "SELECT 2.5::DECIMAL(20,10) AS a"),
        ("SELECT 1 / 3 AS a", "SELECT (1::DECIMAL(38,20) / 3) AS a"),
        # SUM of integers is HUGEINT in DuckDB, BIGINT elsewhere
        ("SELECT SUM(x) AS s FROM range(10) t(x)", "SELECT 45::BIGINT AS s"),
        # date + INTERVAL is a TIMESTAMP in DuckDB, a DATE in PostgreSQL
        ("SELECT DATE '2020-01-01' + INTERVAL 1 DAY AS d", "SELECT DATE '2020-01-02' AS d"),
        # column names are not part of the hash (PostgreSQL folds unquoted names)
        ('SELECT 1 AS "Count"', "SELECT 1 AS count"),
        ("SELECT 5.000::DECIMAL(10,3) AS v", "SELECT 5 AS v"),
        ("SELECT 'nan'::DOUBLE AS v", "SELECT 'nan'::FLOAT AS v"),
    ],
)
def test_values_that_mean_the_same_hash_the_same(left: str, right: str) -> None:
    a, b = _duck(left), _duck(right)
    assert result_sha256(a, ordered=True) == result_sha256(b, ordered=True)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("SELECT 1 AS v", "SELECT '1' AS v"),  # a number is not its text
        ("SELECT true AS v", "SELECT 1 AS v"),  # TRUE is not 1 for sqlgold
        ("SELECT NULL::INT AS v", "SELECT 0 AS v"),  # NULL is its own value
        ("SELECT NULL::VARCHAR AS v", "SELECT '' AS v"),
        ("SELECT DATE '2020-01-02' AS v", "SELECT '2020-01-02' AS v"),
        ("SELECT 1 AS a, 2 AS b", "SELECT 2 AS b, 1 AS a"),  # column order is kept
        ("SELECT 0.1 AS v", "SELECT 0.1000001 AS v"),
        ("SELECT TIMESTAMP '2020-01-02 00:00:01' AS v", "SELECT DATE '2020-01-02' AS v"),
        ("SELECT 9007199254740993 AS v", "SELECT 9007199254740992 AS v"),  # exact integers
    ],
)
def test_different_values_hash_differently(left: str, right: str) -> None:
    assert result_sha256(_duck(left), ordered=True) != result_sha256(_duck(right), ordered=True)


def test_row_order_counts_only_when_ordered() -> None:
    a = _duck("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)")
    b = _duck("SELECT * FROM (VALUES (2, 'b'), (1, 'a')) t(n, s)")
    assert result_sha256(a, ordered=False) == result_sha256(b, ordered=False)
    assert result_sha256(a, ordered=True) != result_sha256(b, ordered=True)


def test_duplicate_rows_count() -> None:
    one = _duck("SELECT 1 AS v")
    two = _duck("SELECT 1 AS v UNION ALL SELECT 1")
    assert result_sha256(one, ordered=False) != result_sha256(two, ordered=False)


def test_empty_results_differ_by_column_count() -> None:
    a = _duck("SELECT 1 AS a WHERE false")
    b = _duck("SELECT 1 AS a, 2 AS b WHERE false")
    assert result_sha256(a, ordered=False) != result_sha256(b, ordered=False)


def test_values_python_cannot_hold_are_hashed() -> None:
    r = _duck(
        "SELECT 'infinity'::DATE AS a, '-infinity'::TIMESTAMP AS b, '294247-01-10'::DATE AS c"
    )
    (row,) = canonical_rows(r)
    assert '"d","294247-01-10"' in row
    assert len(result_sha256(r, ordered=True)) == 64


def test_nested_cells_of_a_sliced_column_are_its_own() -> None:
    r = _duck("SELECT [i, i + 1] AS l, {'a': i} AS s, MAP {'k': i} AS m FROM range(4) t(i)")
    sliced = QueryResult(r.columns, r.types, r.table.slice(2, 2))
    assert canonical_rows(sliced) == [
        '[["l",[["n","2"],["n","3"]]],["m",{"a":["n","2"]}],["p",[[["s","k"],["n","2"]]]]]',
        '[["l",[["n","3"],["n","4"]]],["m",{"a":["n","3"]}],["p",[[["s","k"],["n","3"]]]]]',
    ]


def test_decimals_of_any_precision() -> None:
    for precision, scale in [(4, 0), (18, 0), (18, 3), (38, 10), (76, 20)]:
        arr = pa.array(
            [decimal.Decimal("12.5")],
            pa.decimal256(precision, 1)
            if precision > 38
            else pa.decimal128(precision, max(scale, 1)),
        )
        r = QueryResult(("x",), ("DECIMAL",), pa.table({"x": arr}))
        assert canonical_rows(r) == ['[["n","12.5"]]']


def test_number_text_rounds_to_twelve_significant_digits() -> None:
    assert number_text(0.1 + 0.2) == number_text(0.3) == "0.3"
    assert number_text(decimal.Decimal("1e-20")) == "0.00000000000000000001"
    assert number_text(2.0**60) == "1152921504610000000"
    assert number_text(2**60) == "1152921504606846976"


def test_dates_agree_with_duckdb_over_the_calendar() -> None:
    from score.comparison.result_hash import date_text

    con = duckdb.connect()
    days = list(range(-800_000, 3_000_000, 997)) + [-719_468, 0, 59, 60, 11_016]
    got = con.execute(
        "SELECT year(x), month(x), day(x) "
        "FROM (SELECT DATE '1970-01-01' + d::INTEGER AS x FROM unnest(?) t(d))",
        [days],
    ).fetchall()
    # ISO 8601 astronomical years: year 0 is 1 BC, shown with a sign and 4 digits
    assert [date_text(d) for d in days] == [
        f"{'-' if y < 0 else ''}{abs(y):04d}-{m:02d}-{dd:02d}" for y, m, dd in got
    ]
