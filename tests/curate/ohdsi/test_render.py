"""OHDSI SQL rendering: SqlRender's template rules, and every real QueryLibrary page."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from curate.ohdsi import errors as ohdsi_errors
from curate.ohdsi import render as ohdsi_render
from curate.ohdsi import statements as sq
from curate.ohdsi import template as ohdsi_template
from curate.ohdsi.errors import RenderError
from curate.ohdsi.render import render, render_record, to_sql_server
from curate.sources.load import load_sources
from curate.sources.records import SourceRecord

TEMPLATE = (
    "{DEFAULT @limit = '10'}\nSELECT TOP @limit * FROM @cdm.person WHERE {@men == 'yes'} ? "
    "{gender_concept_id = 8507} : {gender_concept_id = 8532};"
)


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        ({}, "SELECT TOP 10 * FROM cdm.person WHERE gender_concept_id = 8532;"),
        ({"men": "yes"}, "SELECT TOP 10 * FROM cdm.person WHERE gender_concept_id = 8507;"),
        ({"men": ""}, "SELECT TOP 10 * FROM cdm.person WHERE gender_concept_id = 8532;"),
        (
            {"limit": 3, "men": "no"},
            "SELECT TOP 3 * FROM cdm.person WHERE gender_concept_id = 8532;",
        ),
    ],
)
def test_defaults_parameters_and_if_then_else(parameters: dict, expected: str) -> None:
    assert render(TEMPLATE, parameters).sql == expected


# SqlRender's own test suite (OHDSI/SqlRender, tests/testthat/test-renderSql.R): the
# template, the parameters its R ``render`` is given, and what it returns.
SQLRENDER_TEMPLATE = (
    "{DEFAULT @a = '123'} SELECT * FROM table WHERE x = @a AND {@b == 'blaat'}?{y = 1234}:{x = 1};"
)
SQLRENDER_CASES = [
    (SQLRENDER_TEMPLATE, {"a": "abc"}, "SELECT * FROM table WHERE x = abc AND x = 1;"),
    (SQLRENDER_TEMPLATE, {"a": "abc", "b": ""}, "SELECT * FROM table WHERE x = abc AND x = 1;"),
    (SQLRENDER_TEMPLATE, {"b": "1"}, "SELECT * FROM table WHERE x = 123 AND x = 1;"),
    (SQLRENDER_TEMPLATE, {"b": "blaat"}, "SELECT * FROM table WHERE x = 123 AND y = 1234;"),
    (SQLRENDER_TEMPLATE, {"b": "bla"}, "SELECT * FROM table WHERE x = 123 AND x = 1;"),
    ("SELECT * FROM table {@a}?{WHERE x = 1}", {"a": False}, "SELECT * FROM table "),
    ("SELECT * FROM table {@a}?{WHERE x = 1}", {"a": True}, "SELECT * FROM table WHERE x = 1"),
    ("{1 IN (@a)}?{SELECT * FROM table}", {"a": [1, 2, 3, 4]}, "SELECT * FROM table"),
    ("{1 IN (@a)}?{SELECT * FROM table}", {"a": [2, 3, 4]}, ""),
    ("{ 1 IN (@a)}?{SELECT * FROM table}", {"a": [2, 3, 4]}, ""),
    ("{ 1 IN (@a)}?{SELECT * FROM table}", {"a": [1, 2, 3, 4]}, "SELECT * FROM table"),
    ("{true & true}?{true}:{false}", {}, "true"),
    ("{true & false}?{true}:{false}", {}, "false"),
    ("{true | false}?{true}:{false}", {}, "true"),
    ("{true | true}?{true}:{false}", {}, "true"),
    ("{false | false}?{true}:{false}", {}, "false"),
    ("{true & (true & (true & 4 IN (@a)))}?{true}:{false}", {"a": [1, 2, 3]}, "false"),
    ("{true}?{{true} ? {double true} : {true false}} : {false}", {}, "double true"),
    ("{false}?{{true} ? {double true} : {true false}} : {false}", {}, "false"),
    ("{!false}?{true}:{false}", {}, "true"),
    ("{!@a}?{true}:{false}", {"a": "true"}, "false"),
    ("{123 != 123}?{true}:{false}", {}, "false"),
    ("{123 != 234}?{true}:{false}", {}, "true"),
    ("{123 <> 123}?{true}:{false}", {}, "false"),
    ("{123 <> 234}?{true}:{false}", {}, "true"),
    ("{TRUE & (FALSE | 1 IN (1,2,3))} ? {true} : {false}", {}, "true"),
    ("{TRUE & (FALSE | 4 IN (1,2,3))} ? {true} : {false}", {}, "false"),
    (
        "SELECT * FROM table WHERE name = '@name';",
        {"name": "NA\\joe"},
        "SELECT * FROM table WHERE name = 'NA\\joe';",
    ),
    (
        "SELECT * FROM table WHERE name = '@name';",
        {"name": "NA$joe"},
        "SELECT * FROM table WHERE name = 'NA$joe';",
    ),
]


@pytest.mark.parametrize(("sql", "parameters", "expected"), SQLRENDER_CASES)
def test_sqlrender_test_suite(sql: str, parameters: dict, expected: str) -> None:
    assert render(sql, parameters).sql == expected.strip()


def test_sqlrender_fails_where_sqlrender_fails() -> None:
    # test-renderSql.R: "error on bad boolean logic syntax" (one equals sign)
    with pytest.raises(RenderError) as err:
        render("{true = true} ? {true} : {false}")
    assert err.value.reason == ohdsi_errors.BAD_CONDITION


@pytest.mark.parametrize(
    ("condition", "parameters", "chosen"),
    [
        ("@flag", {"flag": True}, "then"),
        ("@flag", {"flag": False}, "else"),
        ("@flag", {"flag": "TRUE"}, "then"),
        ("!@flag", {"flag": "false"}, "then"),
        ("1", {}, "then"),
        ("0", {}, "else"),
        ("@v == 5", {"v": 5}, "then"),
        ("@v != 5", {"v": 5}, "else"),
        ("@v <> 'x'", {"v": "x"}, "else"),
        ("\"@v\" == 'x'", {"v": "x"}, "then"),
        ("3 IN (@list)", {"list": [1, 2, 3]}, "then"),
        ("4 IN (@list)", {"list": [1, 2, 3]}, "else"),
        ("'b' in ('a','b')", {}, "then"),
        # SqlRender does not trim IN elements: ' b' is not 'b'
        ("'b' in ('a', 'b')", {}, "else"),
        ("@a == 1 & @b == 2", {"a": 1, "b": 2}, "then"),
        ("@a == 1 & @b == 2", {"a": 1, "b": 3}, "else"),
        ("@a == 1 | @b == 2", {"a": 0, "b": 2}, "then"),
        ("(@a == 1 | @b == 2) & !(@c == 3)", {"a": 1, "b": 0, "c": 4}, "then"),
        ("@missing == 'x'", {}, "else"),  # SqlRender compares the unfilled name
        # & is split first: '2 == 2 | 1 == 0' compares '2' with '2 | 1 == 0'
        ("1 == 1 & 2 == 2 | 1 == 0", {}, "else"),
        # DataQualityDashboard: the record's cohort = FALSE, not the schema cdm
        ("@cohort & '@runForCohort' == 'Yes'", {"cohort": "FALSE", "runForCohort": "Yes"}, "else"),
        ('@t == "datetime" | @t == "date"', {"t": "date"}, "then"),
        ("@s.@a != @s.@b", {"s": "cdm", "a": "PERSON", "b": "PERSON"}, "else"),
    ],
)
def test_conditions(condition: str, parameters: dict, chosen: str) -> None:
    assert render(f"{{{condition}}} ? {{then}} : {{else}}", parameters).sql == chosen


def test_blocks_without_else_nest_and_keep_outer_text() -> None:
    sql = "SELECT a {@x} ? {, b {@y} ? {, c}} FROM t"
    assert render(sql, {"x": 1, "y": 1}).sql == "SELECT a , b , c FROM t"
    assert render(sql, {"x": 1, "y": 0}).sql == "SELECT a , b  FROM t"
    assert render(sql, {"x": 0}).sql == "SELECT a  FROM t"  # @y never looked at


def test_schema_placeholders_map_to_cdm_unless_the_record_says_otherwise() -> None:
    sql = (
        "USE @cdm_database_schema; SELECT * FROM @cdmDatabaseSchema.person p "
        "JOIN @vocabulary_database_schema.concept c ON 1 = 1 "
        "JOIN @results_database_schema.cohort r ON 1 = 1 JOIN @anything.x ON 1 = 1"
    )
    result = render(sql, {"cdm_database_schema": "mine"})
    assert result.sql == (
        "USE mine; SELECT * FROM cdm.person p JOIN cdm.concept c ON 1 = 1 "
        "JOIN cdm.cohort r ON 1 = 1 JOIN cdm.x ON 1 = 1"
    )
    assert "@anything -> cdm" in result.notes
    assert {"cdm", "vocab", "cdm_database_schema"} <= ohdsi_render.SCHEMA_PLACEHOLDERS
    # a placeholder default loses to the record's own value (DQD's cohort = FALSE)
    assert render("{@cohort} ? {x} : {y}", {"cohort": "FALSE"}).sql == "y"
    assert render("SELECT * FROM @cohort.t").sql == "SELECT * FROM cdm.t"


def test_parameters_substitute_as_plain_text_longest_name_first() -> None:
    sql = "SELECT * FROM cdm.concept WHERE concept_id IN (@ids) AND name LIKE '%@word%' AND x = @n"
    out = render(sql, {"ids": [1, 2], "word": "pain", "n": 1.5}).sql
    assert out == (
        "SELECT * FROM cdm.concept WHERE concept_id IN (1,2) AND name LIKE '%pain%' AND x = 1.5"
    )
    # a longer name is not cut short by a shorter one
    assert render("SELECT @a, @ab", {"a": 1, "ab": 2}).sql == "SELECT 1, 2"
    # Achilles: names are replaced as text, so a suffix after a name stays
    achilles = "SELECT 1 AS n INTO @scratchDatabaseSchema@schemaDelim@tempAchillesPrefix_1"
    params = {"scratchDatabaseSchema": "#", "schemaDelim": "s_", "tempAchillesPrefix": "tmpach"}
    assert render(achilles, params).sql == "SELECT 1 AS n INTO #s_tmpach_1"
    # T-SQL system variables are not parameters
    assert render("SELECT @@ROWCOUNT").sql == "SELECT @@ROWCOUNT"


def test_literals_and_comments_are_substituted_and_may_keep_unfilled_names() -> None:
    sql = (
        "SELECT '@a' AS a, '@nobody@example.org' AS b -- @a and @c\n"
        "--HINT DISTRIBUTE_ON_KEY(x)\nFROM t"
    )
    result = render(sql, {"a": "x"})
    assert result.sql == (
        "SELECT 'x' AS a, '@nobody@example.org' AS b -- x and @c\n"
        "--HINT DISTRIBUTE_ON_KEY(x)\nFROM t"
    )
    assert any("@nobody" in n and "literal" in n for n in result.notes)
    uses = ohdsi_template.parameter_uses("SELECT '}' /* @x */ @y -- don't @z\n@w")
    assert [(u.name, u.in_text) for u in uses] == [
        ("x", True),
        ("y", False),
        ("z", True),
        ("w", False),
    ]


def test_braces_are_sqlrender_groups_wherever_they_stand() -> None:
    assert render("SELECT a ? b : c, {x} FROM t").sql == "SELECT a ? b : c, {x} FROM t"
    assert render("{x} ? y").sql == "{x} ? y"
    assert render("SELECT { 1").sql == "SELECT { 1"  # an unmatched brace is text
    # as in SqlRender, a block in a comment is resolved too
    assert render("SELECT 1 -- {1} ? {yes} : {no}").sql == "SELECT 1 -- yes"


def test_defaults_are_read_as_sqlrender_reads_them() -> None:
    assert ohdsi_template.defaults("{DEFAULT @a = 1}{DEFAULT @a = 2}") == {"a": "2"}
    assert ohdsi_template.defaults("{DEFAULT a}") == {}  # no '=': no default, still removed
    assert render("{DEFAULT a}SELECT 1").sql == "SELECT 1"
    assert render("{DEFAULT @a = 1}SELECT @a", {"a": 7}).sql == "SELECT 7"


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT @foo", ohdsi_errors.MISSING_PARAMETER),
        ("{@flag} ? {x}", ohdsi_errors.BAD_CONDITION),
        ("{'yes'} ? {x}", ohdsi_errors.BAD_CONDITION),
        ("{1 IN 1} ? {x}", ohdsi_errors.BAD_CONDITION),
        ("{1 == 1 && 2 == 2} ? {x}", ohdsi_errors.BAD_CONDITION),
        ("{DEFAULT @a =}", ohdsi_errors.BAD_DEFAULT),
    ],
)
def test_render_errors_have_named_reasons(sql: str, reason: str) -> None:
    with pytest.raises(RenderError) as err:
        render(sql, {"flag": "maybe"})
    assert err.value.reason == reason and err.value.stage == "ohdsi"
    if reason == ohdsi_errors.MISSING_PARAMETER:
        assert err.value.message == "parameter @foo has no value"


def test_to_sql_server_renders_then_makes_one_query() -> None:
    script = (
        "IF OBJECT_ID('tempdb..#p', 'U') IS NOT NULL DROP TABLE #p;\n"
        "SELECT person_id INTO #p FROM @cdm.person WHERE year_of_birth > @year;\n"
        "SELECT COUNT(*) AS n FROM #p;\nDROP TABLE #p;"
    )
    result = to_sql_server(script, {"year": 1950})
    (query,) = sqlglot.parse(result.sql, read="tsql")
    assert isinstance(query, exp.Select) and query.args["with_"]
    assert "cdm.person" in result.sql and "1950" in result.sql and "#" not in result.sql
    assert "@cdm -> cdm" in result.notes and "#p became CTE p" in result.notes
    with pytest.raises(RenderError) as err:
        to_sql_server("SELECT 1; SELECT 2")
    assert err.value.reason == sq.SEVERAL_QUERIES


def record(sql: str, dialect: str, **extra: object) -> SourceRecord:
    return SourceRecord(id="r1", question="q?", gold_sql=sql, gold_dialect=dialect, **extra)


def test_render_record() -> None:
    rec = record(
        "SELECT COUNT(*) AS n FROM @cdm.person WHERE year_of_birth = @y",
        "ohdsi",
        parameters={"y": 1970},
        answer_sql="SELECT 1 AS n; ",
        answer_dialect="tsql",
    )
    out, notes = render_record(rec)
    assert out.gold_dialect == out.answer_dialect == "tsql"
    assert "cdm.person" in out.gold_sql and "1970" in out.gold_sql
    assert out.answer_sql == "SELECT\n  1 AS n"
    assert notes == ("gold_sql: @cdm -> cdm",)
    assert out.id == rec.id and out.parameters == rec.parameters
    duck = record("SELECT @x FROM cdm.person", "duckdb")
    assert render_record(duck) == (duck, ())
    with pytest.raises(RenderError) as err:
        render_record(record("SELECT @nope", "ohdsi"))
    assert err.value.task_id == "r1" and "(task r1)" in str(err.value)
    with pytest.raises(RenderError, match="answer_sql: "):
        render_record(
            record("SELECT 1", "tsql", answer_sql="SELECT 1; SELECT 2", answer_dialect="tsql")
        )


def test_every_querylibrary_page_renders_or_has_a_named_reason(querylibrary_dir: Path) -> None:
    records, problems = load_sources(querylibrary_dir, "querylibrary")
    assert problems == []
    outcomes: Counter[str] = Counter()
    for rec in records:
        try:
            out, notes = render_record(rec)
        except RenderError as e:
            assert e.reason in sq.REASONS or e.reason in {
                ohdsi_errors.MISSING_PARAMETER,
                ohdsi_errors.BAD_CONDITION,
                ohdsi_errors.BAD_DEFAULT,
            }
            outcomes[e.reason] += 1
            continue
        statements = sqlglot.parse(out.gold_sql, read="tsql")
        assert len(statements) == 1 and isinstance(statements[0], exp.Query), rec.id
        assert "@" not in out.gold_sql and "cdm." in out.gold_sql
        outcomes["rendered"] += 1
    assert sum(outcomes.values()) == len(records)
    # P02's SQL has "AND WHERE" (a typo in the page): the one page that is dropped.
    assert outcomes == {"rendered": len(records) - 1, sq.PARSE_ERROR: 1}
