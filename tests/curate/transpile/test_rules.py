"""The transpile's machinery: the RULES list, determinism, one annotation per query,
pass-through of DuckDB SQL, warnings, and the pure helpers the rules use."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

import curate.transpile.rules.annotate as annotate_module
from curate.transpile.rules import KNOWN_LIMITS, RULES, apply_rules, hazards, reject, rules_for
from curate.transpile.rules.annotate import CannotAnnotate, annotate
from curate.transpile.rules.base import Nodes, children_first
from curate.transpile.rules.convert import read_styled
from curate.transpile.rules.date_strings import is_iso, read_datetime
from curate.transpile.rules.strings import like_to_regex
from curate.transpile.to_duckdb import READS, Transpiled, TranspileError, transpile
from tests.paths import PROJECT_SOURCE

TYPICAL = """
SELECT TOP 10 c.concept_name, COUNT(DISTINCT co.person_id) AS persons,
       AVG(DATEDIFF(day, p.birth_datetime, co.condition_start_date) / 365) AS mean_age
FROM condition_occurrence co
JOIN person p ON p.person_id = co.person_id
JOIN concept c ON c.concept_id = co.condition_concept_id
WHERE co.condition_start_date >= '20100101' AND c.domain_id = 'Condition'
GROUP BY c.concept_name
ORDER BY persons DESC
"""


def test_rules_are_named_described_and_documented() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    for rule in RULES:
        assert rule.description and rule.phase in ("parse", "names", "types")
        assert rule.dialects <= {"tsql", "postgres", "oracle", "duckdb"}
        if rule.phase != "parse":
            assert ">>>" in (rule.fn.__doc__ or ""), f"{rule.name} has no docstring example"
    assert all(isinstance(line, str) and line for line in KNOWN_LIMITS)


def test_duckdb_input_only_gets_its_tables_qualified() -> None:
    assert [r.name for r in rules_for("duckdb", "types")] == []
    assert transpile("SELECT 7 / 2 ;  ", read="duckdb") == Transpiled("SELECT 7 / 2", ())
    kept = transpile("select  person_id\nfrom cdm.person -- note", read="duckdb")
    assert kept.sql == "select  person_id\nfrom cdm.person -- note"


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(TranspileError, match="cannot read dialect"):
        transpile("SELECT 1", read="mysql")


def test_same_input_gives_the_same_output() -> None:
    first = transpile(TYPICAL)
    assert all(transpile(TYPICAL) == first for _ in range(3))
    assert first.rules == (
        "tsql_date_parts",
        "qualify_cdm_tables",
        "date_string_literals",
        "avg_of_integers",
        "integer_division",
    )


def test_output_keeps_the_authors_layout() -> None:
    out = transpile(TYPICAL).sql
    assert out.startswith("SELECT c.concept_name, COUNT(DISTINCT co.person_id) AS persons")
    assert "FROM cdm.condition_occurrence AS co" in out
    assert '"' not in out  # qualify's quoting never reaches the output
    assert "LIMIT 10" in out


def test_annotation_runs_once_per_query(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = annotate_module.annotate_types

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(annotate_module, "annotate_types", counting)
    transpile(TYPICAL)
    assert len(calls) == 1


@pytest.mark.parametrize(
    "kinds",
    [None, (exp.Literal,), (exp.Func,), (exp.Binary, exp.Cast), (exp.Window,), (exp.Anonymous,)],
)
def test_a_rule_is_offered_its_classes_children_first(kinds) -> None:
    """The index by class offers what a test of every node, children first, would."""
    tree = parse_one(TYPICAL, read="tsql")
    expected = [n for n in children_first(tree) if kinds is None or isinstance(n, kinds)]
    assert [id(n) for n in Nodes(tree).of(kinds)] == [id(n) for n in expected]


def test_annotation_leaves_the_trees_positions_and_comments() -> None:
    tree = parse_one("SELECT /* why */ year_of_birth / 2 AS half FROM person", read="tsql")
    before = [(dict(n.meta), n.comments) for n in tree.walk()]
    annotate(tree, "tsql")
    assert [(dict(n.meta), n.comments) for n in tree.walk()] == before
    assert any(meta.get("line") for meta, _ in before) and any(c for _, c in before)


@pytest.mark.parametrize("read", ["postgres", "oracle"])
def test_a_derived_table_without_an_alias_is_typed(read) -> None:
    # PostgreSQL 16 and Oracle read a subquery in FROM without an alias; its columns are
    # typed only if the tree's tables are qualified (named) before its columns are
    tree = parse_one("SELECT a + 1 FROM (SELECT year_of_birth AS a FROM cdm.person)", read=read)
    assert annotate(tree, read).selects[0].type.this is not exp.DataType.Type.UNKNOWN


def test_pretty_output_is_the_same_query() -> None:
    flat, pretty = transpile(TYPICAL), transpile(TYPICAL, pretty=True)
    assert "\n" in pretty.sql and pretty.rules == flat.rules
    assert " ".join(pretty.sql.split()) == flat.sql


def test_case_sensitive_comparisons_are_warned_about() -> None:
    result = transpile("SELECT person_id FROM person WHERE gender_source_value = 'm'")
    assert any(w.startswith("collation: compares text") for w in result.warnings)
    grouped = transpile("SELECT concept_name, COUNT(*) FROM concept GROUP BY concept_name")
    assert any(w.startswith("collation: groups or sorts text") for w in grouped.warnings)
    numbers = transpile("SELECT person_id FROM person WHERE year_of_birth > 1950 ORDER BY 1")
    assert numbers.warnings == ()


def test_postgresql_text_comparisons_are_not_warned_about_as_sql_server_collation() -> None:
    # PostgreSQL compares text case-sensitively, as DuckDB does: the NOCASE check that
    # settles SQL Server's collation warnings would test the wrong thing
    for sql in (
        "SELECT person_id FROM person WHERE gender_source_value = 'm'",
        "SELECT concept_name, COUNT(*) FROM concept GROUP BY concept_name",
    ):
        assert transpile(sql, read="postgres").warnings == ()
        assert transpile(sql, read="tsql").warnings != ()


def test_untyped_division_is_warned_about() -> None:
    result = transpile("SELECT a / b FROM results.my_table")
    assert result.sql == "SELECT a / b FROM results.my_table"
    assert any(w.startswith("division:") for w in result.warnings)


def test_a_schema_can_be_given() -> None:
    schema = {"results": {"cohort_counts": {"n": "INTEGER", "d": "INTEGER"}}}
    result = transpile("SELECT n / d FROM results.cohort_counts", schema=schema)
    assert result.sql == "SELECT n // d FROM results.cohort_counts"


def test_errors_name_the_refusing_rule() -> None:
    with pytest.raises(TranspileError) as raised:
        transpile("SELECT DISTINCT TOP 1 WITH TIES year_of_birth FROM person ORDER BY 1")
    assert raised.value.rule == "top_with_ties"
    with pytest.raises(TranspileError) as raised:
        transpile("SELECT TOP 5 PERCENT * FROM person")
    assert raised.value.rule == "reject:top_percent"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2011-01-02", dt.datetime(2011, 1, 2)),
        ("20110102", dt.datetime(2011, 1, 2)),
        ("1/2/2011", dt.datetime(2011, 1, 2)),
        ("01.02.11", dt.datetime(2011, 1, 2)),
        ("2011/01/02", dt.datetime(2011, 1, 2)),
        ("01-jan-2011", dt.datetime(2011, 1, 1)),
        ("2 January 2011", dt.datetime(2011, 1, 2)),
        ("Jan 2, 2011", dt.datetime(2011, 1, 2)),
        ("jan 2 49", dt.datetime(2049, 1, 2)),
        ("jan 2 50", dt.datetime(1950, 1, 2)),
        ("2011-01-02T10:11:12.5", dt.datetime(2011, 1, 2, 10, 11, 12, 500000)),
        ("Jan 2 2011 10:30PM", dt.datetime(2011, 1, 2, 22, 30)),
        ("Jan 2 2011 12:05AM", dt.datetime(2011, 1, 2, 0, 5)),
        ("2/30/2011", None),
        ("13/1/2011", None),
        ("Janu 2011 2012", None),
        ("", None),
    ],
)
def test_sql_server_date_strings(text: str, expected: dt.datetime | None) -> None:
    assert read_datetime(text) == expected


def test_iso_strings_are_left_to_duckdb() -> None:
    assert is_iso("2011-01-02") and is_iso("2011-01-02 10:11:12.123")
    assert not is_iso("2011-1-2") and not is_iso("01/02/2011")


def test_convert_styles_read_two_digit_years_with_cutoff_2049() -> None:
    assert read_styled("02/01/49", 3) == dt.datetime(2049, 1, 2)
    assert read_styled("02/01/50", 3) == dt.datetime(1950, 1, 2)
    with pytest.raises(TranspileError):
        read_styled("2011-01-02", 103)


@pytest.mark.parametrize(
    ("pattern", "regex"),
    [
        ("abc%", "abc.*"),
        ("_[0-9]", ".[0-9]"),
        ("[^a-c]x", "[^a-c]x"),
        ("100[%]", "100\\%"),
        ("[_]a", "_a"),
        ("a.b", "a\\.b"),
        ("[]]", "\\]"),
    ],
)
def test_like_patterns_as_regular_expressions(pattern: str, regex: str) -> None:
    assert like_to_regex(pattern) == regex


def test_unclosed_like_class_is_refused() -> None:
    with pytest.raises(TranspileError):
        like_to_regex("[abc")


def _annotated(texts: list[tuple[str, str]]) -> list[tuple[str, object]]:
    """Each ``(read, sql)`` parsed, its names rules applied and annotated, as transpile
    does (those that cannot be are left out)."""
    trees = []
    for read, sql in texts:
        try:
            tree = parse_one(sql, read=READS[read])
            tree, _ = apply_rules(tree, read, "names")
            trees.append((read, annotate(tree, read)))
        except (TranspileError, CannotAnnotate, SqlglotError):
            continue
    return trees


def _annotated_cases() -> list[tuple[str, object]]:
    """Every case of cases.json parsed, its names rules applied and annotated, as transpile does."""
    cases = json.loads((Path(__file__).parent / "cases.json").read_text())
    return _annotated([(c.get("read", "tsql"), c.get("tsql") or c.get("sql")) for c in cases])


def test_a_rule_declared_with_acts_on_leaves_every_other_node_unchanged() -> None:
    # apply_rule offers such a rule only nodes of its classes: that must give the same tree
    trees = _annotated_cases()
    assert len(trees) > 80
    declared = [rule for rule in RULES if getattr(rule.fn, "kinds", None) is not None]
    assert len(declared) >= 40
    for rule in declared:
        for read, tree in trees:
            if read not in rule.dialects:
                continue
            for node in list(tree.walk()):
                if not isinstance(node, rule.fn.kinds):
                    assert rule.fn(node) is node, f"{rule.name} changed a {type(node).__name__}"


def _gold_trees() -> list[tuple[str, object]]:
    """The trees of :func:`_annotated_cases` and of every SQL Server gold of the
    project's own source file, read and annotated as transpile does."""
    trees = _annotated_cases()
    lines = PROJECT_SOURCE.read_text(encoding="utf-8").splitlines()
    golds = [json.loads(line) for line in lines]
    texts = [g["gold_sql"] for g in golds if g.get("gold_dialect") == "tsql" and g.get("gold_sql")]
    texts.append("SELECT r.n / r.d AS share FROM scratch.results AS r")  # types unknown
    return trees + _annotated([("tsql", sql) for sql in texts])


def test_refusals_and_hazards_are_looked_for_on_every_class_they_can_be_found_on() -> None:
    # reject_unsupported and hazards pass over any node whose class is not in their
    # _CHECKED tuple: a check that can fire on another class must have it added there
    trees = _gold_trees()
    assert len(trees) > 300
    fired = {"reason": 0, "compares": 0, "groups": 0, "division": 0}
    for _, tree in trees:
        for node in tree.walk():
            reason = reject._reason(node)
            compares = hazards._compares_text(node)
            groups = hazards._groups_text(node) is not None
            division = hazards._untyped_division(node)
            name = type(node).__name__
            if reason is not None:
                fired["reason"] += 1
                assert isinstance(node, reject._CHECKED), f"reject: {name} is not in _CHECKED"
            for kind, found in (("compares", compares), ("groups", groups), ("division", division)):
                if found:
                    fired[kind] += 1
                    assert isinstance(node, hazards._CHECKED), f"hazards: {name} not in _CHECKED"
    # every check was seen firing somewhere, so the trees exercise it
    assert all(fired.values()), fired
