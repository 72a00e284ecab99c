"""Prompts: seed 004's layout read from the database used, pinned by sha256, and current."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.generate.database_facts import gather_facts
from score.generate.generate import Prompter, PromptSettings
from score.generate.prompt import build_prompt, render_text
from score.generate.schema_text import schema_sha256, schema_text
from score.generate.template import SYSTEM, TEMPLATE_SHA256
from score.inputs.task_set import instances
from tests.paths import REPO

from .conftest import TASKS

GOLDEN = REPO / "tests" / "score" / "generate" / "golden" / "omop-001.en.zero-shot.txt"


@pytest.fixture(scope="module")
def facts(executor):
    return gather_facts(executor)


@pytest.fixture(scope="module")
def schema(facts):
    return schema_text(facts)


def test_the_golden_prompt_is_current(omop_db):
    result = CliRunner().invoke(
        main, ["prompt", "omop-001", "--tasks", str(TASKS), "--db", str(omop_db)]
    )
    assert result.exit_code == 0, result.output
    assert result.output == GOLDEN.read_text(encoding="utf-8"), (
        f"the prompt changed: if that is meant, regenerate {GOLDEN.relative_to(REPO)} with "
        f"`sqlgold prompt omop-001 > {GOLDEN.relative_to(REPO)}`"
    )


def test_facts_come_from_the_database(facts, executor):
    by_name = {t.name: t for t in facts.tables}
    assert list(by_name) == list(executor.tables)  # CDM order, every table present
    person = by_name["person"]
    assert person.rows == 1130 and len(person.examples) == 3
    assert [r[0] for r in person.examples] == [1, 2, 3]  # ORDER BY ALL: a fixed choice
    assert {"provider_id", "care_site_id"} <= set(person.null_columns)
    assert "person_id" not in person.null_columns
    assert by_name["note"].rows == 0 and by_name["note"].examples == ()
    assert sum(c.concepts for c in facts.concept_counts) == facts.vocabulary.concepts == 754
    assert facts.vocabulary.ancestor_only_self
    assert facts.vocabulary.relationships == (("Maps to", 707, 707),)


def test_the_schema_text_has_seed_004s_parts(schema, facts):
    empty = [t.name for t in facts.tables if not t.rows]
    assert schema.count("CREATE TABLE") == len(facts.tables) - len(empty)
    assert "CREATE TABLE cdm.note (" not in schema and "cdm.note," in schema
    assert "    provider_id INTEGER, -- NULL in every row" in schema
    assert schema.count("3 example rows:") == len(facts.tables) - len(empty)
    assert "Concepts in cdm.concept by domain and vocabulary:" in schema
    assert "Condition\tSNOMED\t125\t123" in schema
    assert "Database note:" in schema and "no hierarchy" in schema


def test_the_schema_sha256_follows_the_database(facts, schema):
    assert schema_sha256(schema_text(facts)) == schema_sha256(schema)  # deterministic
    person = facts.tables[0]
    fewer = dataclasses.replace(person, rows=person.rows - 1)
    changed = dataclasses.replace(facts, tables=(fewer, *facts.tables[1:]))
    other = dataclasses.replace(
        changed, tables=(dataclasses.replace(person, null_columns=()), *facts.tables[1:])
    )
    assert schema_sha256(schema_text(other)) != schema_sha256(schema)


def test_a_prompt_is_pinned_and_states_today_and_the_abstain_rule(schema):
    p = build_prompt("How many persons?", schema, today="2025-12-31")
    system, user = (m["content"] for m in p.messages)
    assert system == SYSTEM and "ABSTAIN" in system and "```sql" in system
    assert user.startswith(schema) and user.endswith("Question: How many persons?")
    assert 'Today is 2025-12-31: read "today"' in user
    assert p.template_sha256 == TEMPLATE_SHA256 and p.schema_sha256 == schema_sha256(schema)
    assert (
        p.prompt_sha256
        == build_prompt("How many persons?", schema, today="2025-12-31").prompt_sha256
    )
    no_today = build_prompt("How many persons?", schema)
    assert "Today is" not in no_today.messages[1]["content"]
    assert no_today.prompt_sha256 != p.prompt_sha256
    assert render_text(p).startswith("=== system ===\n")


def test_today_is_the_option_else_the_tasks_own_else_none(schema):
    stated = Prompter(schema, PromptSettings(today="2025-12-31"))
    unstated = Prompter(schema, PromptSettings())
    assert stated.today_for({"today": "2020-01-01"}) == "2025-12-31"
    assert unstated.today_for({"today": "2020-01-01"}) == "2020-01-01"
    assert unstated.today_for({}) is None


def test_every_instance_of_the_benchmark_gets_a_prompt(all_tasks, schema):
    prompter = Prompter(schema, PromptSettings())
    prompts = [prompter.prompt(i) for i in instances(all_tasks)]
    assert len({p.prompt_sha256 for p in prompts}) == len(prompts)  # questions differ
    assert {p.schema_sha256 for p in prompts} == {schema_sha256(schema)}


def test_prompt_errors_are_one_line(omop_db):
    runner = CliRunner()
    for args, expected in (
        (["prompt", "no-such-task"], "no such task"),
        (["prompt", "omop-001", "--language", "xx"], "no 'xx' question"),
    ):
        result = runner.invoke(main, [*args, "--tasks", str(TASKS), "--db", str(omop_db)])
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert result.output.startswith("error: [generate] ") and expected in result.output
