"""Each DuckDB-to-PostgreSQL fix-up rule, executed on both engines.

A case is DuckDB SQL: it runs as written on DuckDB and transpiled on PostgreSQL, and the
two results must have the same result hash; where sqlglot alone (no rules) gets it
wrong, the case also shows that.
"""

from __future__ import annotations

import pytest

from score.comparison.result_hash import result_sha256
from score.execution.engines.postgres_sql import RULES, transpile_to_postgres
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError

#: rule -> (DuckDB SQL, does sqlglot alone already get it right?)
CASES = {
    "round_numeric": (
        "WITH s AS (SELECT count(*) AS n, sum(year_of_birth) AS m FROM cdm.person) "
        "SELECT ROUND(CAST(m AS DOUBLE) / n, 1) AS r FROM s",
        False,
    ),
    "integer_division": (
        "SELECT year(observation_period_start_date) // 10 * 10 AS decade, count(*) AS n "
        "FROM cdm.observation_period GROUP BY 1 ORDER BY 1",
        True,  # by value; the rule keeps DuckDB's BIGINT (test_integer_division_type)
    ),
    "derived_table_alias": (
        "SELECT count(*) FROM (SELECT DISTINCT gender_concept_id FROM cdm.person)",
        False,
    ),
    "date_trunc_timestamp": (
        "SELECT date_trunc('month', min(observation_period_start_date)) AS m "
        "FROM cdm.observation_period",
        True,  # the same instant (PostgreSQL's is WITH TIME ZONE, in UTC): the hash agrees
    ),
    "day_of_week": (
        "SELECT dayofweek(visit_start_date) AS dow, count(*) AS n FROM cdm.visit_occurrence "
        "GROUP BY 1 ORDER BY 1",
        False,
    ),
    "list_length": ("SELECT len([1, 2, 3]) AS n", False),
    "group_by_all": (
        "SELECT gender_concept_id, count(*) AS n FROM cdm.person GROUP BY ALL ORDER BY 1",
        False,
    ),
    "order_by_all": (
        "SELECT gender_concept_id, count(*) AS n FROM cdm.person GROUP BY ALL ORDER BY ALL DESC",
        False,
    ),
    "having_alias": (
        "SELECT gender_concept_id, count(*) AS n FROM cdm.person "
        "GROUP BY gender_concept_id HAVING n > 10 ORDER BY 1",
        False,
    ),
    "arg_max_min": (
        "SELECT arg_max(person_id, year_of_birth * 100000 + person_id) AS youngest, "
        "arg_min(person_id, (year_of_birth, person_id)) AS oldest FROM cdm.person",
        False,
    ),
    "any_value": (
        "SELECT concept_id, any_value(concept_name) AS name FROM cdm.concept "
        "GROUP BY concept_id ORDER BY 1 LIMIT 5",
        False,
    ),
    "duckdb_functions": (
        "SELECT mean(year_of_birth) AS m, make_date(2020, 2, 29) AS d, "
        "format('{} of {}', 1, 2) AS f FROM cdm.person",
        False,
    ),
    "interval_expression": (
        "SELECT CAST(min(observation_period_start_date) + INTERVAL (count(*) // 100) DAY "
        "AS DATE) AS d, min(observation_period_start_date) - INTERVAL (1 + 1) MONTH AS m "
        "FROM cdm.observation_period",
        False,  # sqlglot writes INTERVAL DAY, the count lost
    ),
    "printf_float": (
        "SELECT printf('%.6g', CAST(year_of_birth AS DOUBLE) / 7) AS g, "
        "printf('%.7e', year_of_birth / 3e7) AS e1, printf('%.15e', -year_of_birth * 1e20) "
        "AS e2, printf('%.16e', CAST(person_id AS DOUBLE) / 9) AS e3 FROM cdm.person "
        "ORDER BY person_id LIMIT 50",
        False,
    ),
    "string_contains": (
        "SELECT count(*) FROM cdm.concept WHERE contains(concept_name, 'in')",
        False,
    ),
}

#: What needs no rule: sqlglot transpiles it, and both engines agree.
NO_RULE_NEEDED = [
    "SELECT count(*) / 7 AS third FROM cdm.person",  # DuckDB divides; sqlglot casts
    "SELECT avg(year_of_birth) AS m FROM cdm.person",  # DOUBLE vs NUMERIC: same value
    "SELECT list(gender_concept_id ORDER BY gender_concept_id) AS ids "
    "FROM (SELECT DISTINCT gender_concept_id FROM cdm.person) AS g",
    "SELECT date_diff('day', min(observation_period_start_date), "
    "max(observation_period_end_date)) AS days FROM cdm.observation_period",
    "SELECT min(observation_period_start_date) + INTERVAL 30 DAY AS d FROM cdm.observation_period",
    "SELECT max(observation_period_end_date) - min(observation_period_start_date) AS days "
    "FROM cdm.observation_period",
]


@pytest.fixture(scope="module")
def pg(pg_cdm):
    with Executor(pg_cdm.reader_url, settings=ExecutorSettings(timeout_seconds=10)) as ex:
        yield ex


def _hash(outcome) -> str:
    assert not isinstance(outcome, QueryError), outcome
    return result_sha256(outcome, ordered=True)


def test_every_rule_has_a_case():
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_gives_the_duckdb_result_on_postgres(rule, executor, pg):
    sql, sqlglot_alone_agrees = CASES[rule]
    duck = executor.execute(sql)
    assert _hash(pg.execute(transpile_to_postgres(sql))) == _hash(duck)
    bare = pg.try_execute(transpile_to_postgres(sql, rules=False))
    agrees = not isinstance(bare, QueryError) and _hash(bare) == _hash(duck)
    assert agrees == sqlglot_alone_agrees


@pytest.mark.parametrize("sql", NO_RULE_NEEDED)
def test_sqlglot_alone_suffices(sql, executor, pg):
    assert _hash(pg.execute(sql, dialect="duckdb")) == _hash(executor.execute(sql))


def test_integer_division_type(executor, pg):
    """``DIV`` alone is NUMERIC on PostgreSQL (a DOUBLE column in sqlgold's results);
    the rule gives DuckDB's BIGINT."""
    sql, _ = CASES["integer_division"]
    assert executor.execute(sql).types[0] == "BIGINT"
    assert pg.execute(transpile_to_postgres(sql)).types[0] == "BIGINT"
    assert pg.execute(transpile_to_postgres(sql, rules=False)).types[0] == "DOUBLE"


def test_named_difference_floor_division_of_non_integers(executor, pg):
    """DuckDB's ``//`` of non-integers divides; on PostgreSQL the rule truncates."""
    sql = "SELECT 7.5 // 2 AS q"
    assert executor.execute(sql).rows() == [(3.75,)]
    assert pg.execute(sql, dialect="duckdb").rows() == [(3,)]


def test_unreadable_duckdb_sql_is_a_parse_error(pg):
    outcome = pg.try_execute("SELECT FROM WHERE (", dialect="duckdb")
    assert isinstance(outcome, QueryError) and outcome.kind == "parse_error"


def test_transpiled_sql_still_meets_the_guard(pg):
    outcome = pg.try_execute("SELECT * FROM read_csv('/etc/passwd')", dialect="duckdb")
    assert isinstance(outcome, QueryError) and outcome.kind == "guard_rejected"


#: Values C's %g and %e round or switch notation on (and random ones, seeded).
_PRINTF_VALUES = [
    0.0,
    1.0,
    -1.0,
    0.1,
    123456.0,
    1234567.0,
    999999.5,
    9999995.0,
    0.0001,
    0.00001234567,
    1e-5,
    12.5,
    -0.000123456789,
    1e16,
    2.5e-300,
    1 / 3,
    1e100,
    0.000099999996,
    999999.4,
    -55.55555,
]


@pytest.mark.parametrize("fmt", ["%.6g", "%.7e", "%.15e", "%.16e"])
def test_printf_float_is_c_printf(fmt, pg):
    """printf_float's PostgreSQL text is C's printf (Python's % formats the same way)."""
    import random

    rng = random.Random(7)
    values = _PRINTF_VALUES + [rng.uniform(-1, 1) * 10 ** rng.randint(-9, 12) for _ in range(60)]
    rows = " UNION ALL ".join(
        f"SELECT {i} AS i, CAST({v!r} AS DOUBLE) AS x" for i, v in enumerate(values)
    )
    sql = f"SELECT i, printf('{fmt}', x) AS t FROM ({rows}) AS v ORDER BY i"
    got = [t for _, t in pg.execute(transpile_to_postgres(sql)).rows()]
    assert got == [fmt % v for v in values]


def test_integer_division_truncates_toward_zero_as_sql_server(executor, pg):
    """SQL Server's integer division truncates toward zero; DuckDB's ``//`` does and so
    does the rule's DIV on PostgreSQL (never floor: -7 // 2 is -3)."""
    sql = "SELECT -7 // 2 AS a, 7 // -2 AS b, CAST(-9 AS BIGINT) // 4 AS c, 9 // 4 AS d"
    assert executor.execute(sql).rows() == [(-3, -3, -2, 2)]
    assert pg.execute(transpile_to_postgres(sql)).rows() == [(-3, -3, -2, 2)]
