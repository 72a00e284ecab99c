"""The public Python API (``import curate``, ``import score``): every name typed and
documented, nothing heavy imported with the packages, and each function writing exactly
what its command writes, with the command's defaults."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import curate
import score
from curate.cli import main
from score.errors import SqlgoldError
from tests.paths import PROJECT_SOURCE as SOURCE
from tests.task_factory import PERSONS, make_task, write_task_file


def _source(path: Path, n: int = 6) -> Path:
    """The first ``n`` records of the shipped benchmark's source."""
    lines = SOURCE.read_text(encoding="utf-8").splitlines()[:n]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("package", [curate, score], ids=["curate", "score"])
def test_every_public_name_is_documented_and_its_functions_typed(package) -> None:
    assert package.__all__ == sorted(package.__all__)
    for name in package.__all__:
        value = getattr(package, name)
        assert inspect.getdoc(value), name
        assert name in package.__doc__, f"{name} is not in {package.__name__}'s docstring"
        if inspect.isfunction(value):
            hints = value.__annotations__  # as written (the types a checker reads)
            params = set(inspect.signature(value).parameters)
            assert "return" in hints, name
            assert params <= set(hints), (name, params - set(hints))
    assert set(dir(package)) >= set(package.__all__)
    folder = Path(package.__file__).parent
    for name in package.__all__:  # a subpackage of the same name would hide it
        assert not (folder / name).exists() and not (folder / f"{name}.py").exists(), name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        package.nothing  # noqa: B018


def test_importing_the_packages_imports_no_engine_and_no_parser() -> None:
    code = (
        "import sys, curate, score; "
        "print(sorted(m for m in ('duckdb', 'sqlglot', 'pyarrow', 'scipy', 'datasets') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_curate_file_writes_what_sqlgold_curate_writes(omop_db, tmp_path, monkeypatch) -> None:
    source = _source(tmp_path / "mine_source.jsonl")
    (tmp_path / "api").mkdir()
    (tmp_path / "cli").mkdir()
    monkeypatch.chdir(tmp_path / "api")
    done = curate.curate_file(source, db=omop_db)
    assert isinstance(done, curate.Curation)
    assert done.tasks_path == Path("mine_tasks.jsonl")  # the command's default, here
    assert done.report_path == Path("mine_report.json")
    assert done.kept + done.dropped == 6 and done.kept == len(done.tasks)
    monkeypatch.chdir(tmp_path / "cli")
    ran = CliRunner().invoke(main, ["curate", str(source), "--db", str(omop_db), "-q"])
    assert ran.exit_code == 0, ran.output
    for name in ("mine_tasks.jsonl", "mine_report.json", "mine_report.md", "mine_report.html"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_curate_file_takes_the_reference_rules_and_limits(omop_db, tmp_path) -> None:
    source = _source(tmp_path / "mine_source.jsonl", n=3)
    strict = curate.ReferenceRules(min_rows=2000)  # no gold of these returns 2000 rows
    with pytest.raises(SqlgoldError, match=r"\[curate\].*no task kept of 3"):
        curate.curate_file(source, db=omop_db, rules=strict, out=tmp_path / "t.jsonl")
    assert not (tmp_path / "t.jsonl").exists()
    report = json.loads((tmp_path / "t_report.json").read_text())
    assert report["settings"]["rules"]["min_rows"] == 2000
    done = curate.curate_file(
        source,
        db=omop_db,
        out=tmp_path / "pinned.jsonl",
        settings=score.limits(today="2026-01-01", timeout=9),
    )
    assert done.report["settings"]["today"] == "2026-01-01"
    assert done.report["settings"]["timeout_seconds"] == 9


def test_verify_pair_says_same_or_different(omop_db) -> None:
    gold = "SELECT COUNT(*) AS n FROM cdm.person"
    same = curate.verify_pair(gold, "SELECT count(person_id) AS n FROM cdm.person", db=omop_db)
    assert same.ok and same.match
    assert same.gold.result is not None and same.gold.result.rows() == [(PERSONS,)]
    other = curate.verify_pair(
        gold, "SELECT count(*) FROM cdm.person WHERE gender_concept_id = 8532", db=omop_db
    )
    assert not other.ok and other.match is False and other.reason


def test_publish_then_datasets_loads_the_release(omop_db, tmp_path, monkeypatch) -> None:
    from datasets import load_dataset

    monkeypatch.chdir(tmp_path)
    done = curate.curate_file(_source(tmp_path / "mine_source.jsonl"), db=omop_db)
    release = curate.publish_release(
        done.tasks_path, "1.0.0", out=tmp_path / "releases", db=omop_db
    )
    assert isinstance(release, curate.PublishResult)
    assert release.created and release.path == tmp_path / "releases" / "mine" / "1.0.0"
    again = curate.publish_release(done.tasks_path, "1.0.0", out=tmp_path / "releases", db=omop_db)
    assert not again.created
    loaded = load_dataset(str(release.path), "tasks")
    assert sum(len(s) for s in loaded.values()) == done.kept
    with pytest.raises(SqlgoldError, match="version"):
        curate.publish_release(done.tasks_path, "one", out=tmp_path / "releases", db=omop_db)


def _predictions(path: Path, answers: dict[str, str], run: str) -> Path:
    lines = [json.dumps({"task_id": t, "sql": sql, "run": run}) for t, sql in answers.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_score_report_and_compare_runs(omop_db, tmp_path) -> None:
    tasks = write_task_file(
        tmp_path / "tasks.jsonl", [make_task(f"t{i}", tier="simple") for i in range(1, 7)]
    )
    right = "SELECT count(*) AS n FROM cdm.person"
    wrong = "SELECT 1 AS n"
    a = _predictions(tmp_path / "a.jsonl", {f"t{i}": right for i in range(1, 7)}, "a")
    b = _predictions(
        tmp_path / "b.jsonl", {f"t{i}": right if i < 3 else wrong for i in range(1, 7)}, "b"
    )
    seen: list[tuple[int, int]] = []
    run_a = score.score_run(
        tasks,
        a,
        tmp_path / "ra",
        db=omop_db,
        split="all",
        progress=lambda d, t: seen.append((d, t)),
    )
    assert isinstance(run_a, score.ScoredRun)
    assert (run_a.ex, run_a.n_instances, run_a.gold_drift) == (1.0, 6, 0)
    assert seen and seen[-1] == (6, 6)
    assert len(run_a.results()) == 6 and run_a.split == "all (6 of 6 tasks)"
    run_b = score.score_run(tasks, b, tmp_path / "rb", db=omop_db, split="all", cache=None)
    assert run_b.ex == pytest.approx(2 / 6)
    report = score.report_runs([run_a.out])
    assert report.markdown.is_file() and report.page is not None and report.page.is_file()
    both = score.report_runs([run_a.out, run_b.out], tmp_path / "both")
    assert both.page is None and len(both.summaries) == 2
    comparison = score.compare_runs(run_a.out, run_b.out)
    assert (comparison.b, comparison.c, comparison.runs) == (4, 0, ("a", "b"))
    assert comparison.out == tmp_path / "ra_vs_rb"
    assert json.loads((comparison.out / "comparison.json").read_text())["b"] == 4
    assert 0 < comparison.p_value < 0.2


def test_score_run_defaults_to_the_test_split_as_the_command_does(
    omop_db, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task(f"t{i}") for i in range(1, 9)])
    preds = _predictions(
        tmp_path / "p.jsonl", {f"t{i}": "SELECT 1130 AS n" for i in range(1, 9)}, "x"
    )
    run = score.score_run(tasks, preds, tmp_path / "r", db=omop_db)
    ran = CliRunner().invoke(
        main, ["score", "run", str(tasks), str(preds), "--db", str(omop_db), "--out", "r2", "-q"]
    )
    assert ran.exit_code == 0, ran.output
    assert run.split.startswith("test (")
    assert run.n_instances == json.loads(Path("r2/summary.json").read_text())["n_instances"]


def test_build_suite_refuses_a_server_and_builds_on_a_duckdb_file(
    omop_db, tmp_path, made_suite
) -> None:
    tasks = made_suite.folder.parent / "tasks.jsonl"
    with pytest.raises(SqlgoldError, match=r"\[suite\].*not on postgres"):
        score.build_suite(tasks, tmp_path / "s", db="postgresql://u@localhost/omop")
    built = score.build_suite(tasks, tmp_path / "s", db=omop_db, max_candidates=40)
    assert isinstance(built, score.Suite)
    assert (tmp_path / "s" / "suite.json").is_file() and built.variants >= 1
