"""sqlgold publish --suite: the test suite built for the released tasks goes into the
release as suite/, hashed in the manifest, readable by read_suite, explained in the
card; a suite built for other tasks is refused and leaves no release behind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from curate.publish.release import check_release, publish
from score.inputs.task_manifest import read_manifest, set_hash
from score.inputs.task_set import read_release
from score.suite.suite_file import MANIFEST, SuiteError, check_suite_for, manifest_text, read_suite
from tests.curate.publish.test_release import load_offline
from tests.task_records import DATABASE_COLUMNS, sample_tasks, write_inputs


def suite_for(made_suite, folder: Path, tasks) -> Path:
    """A copy of the made suite, its manifest saying it was built for ``tasks``."""
    shutil.copytree(made_suite.folder, folder)
    (folder / MANIFEST).write_text(
        manifest_text(
            task_set_sha256=set_hash(tasks),
            base_fingerprint=made_suite.base_fingerprint,
            seed=made_suite.seed,
            settings=made_suite.settings,
            variants=made_suite.variants,
            drops=made_suite.drops,
        )
    )
    return folder


def test_a_release_carries_its_suite_hashed_and_readable(made_suite, tmp_path):
    tasks = sample_tasks()
    task_file = write_inputs(tmp_path / "in", tasks, fingerprint=made_suite.base_fingerprint)
    suite = suite_for(made_suite, tmp_path / "suite", tasks)
    result = publish(
        task_file,
        "0.1.0",
        tmp_path / "releases",
        database_columns=DATABASE_COLUMNS,
        suite_dir=suite,
    )
    release = result.path
    assert check_release(release) == []
    manifest = read_manifest(release)
    assert manifest["files"]["suite/suite.json"] == manifest["suite"]["manifest_sha256"]
    assert "suite/data/v1-even/person.parquet" in manifest["files"]
    assert "suite/data/vocabulary/concept.parquet" in manifest["files"]
    assert manifest["suite"]["variants"] == ["v1-even", "v2-thirds", "v3-genders"]
    released = read_suite(release / "suite")  # every variant's data checked on the way
    released_tasks, _ = read_release(release)
    check_suite_for(
        released,
        task_set_sha256=set_hash(released_tasks),
        base_fingerprint=made_suite.base_fingerprint,
    )
    card = (release / "README.md").read_text()
    assert "### Test suite" in card and "--suite <this folder>/suite" in card
    assert "drops 1 task(s)" in card
    loaded = load_offline(release, tmp_path)  # datasets still loads the configs alone
    assert len(loaded["train"]) + len(loaded["test"]) == len(tasks)
    (release / "suite" / "data" / "v2-thirds" / "person.parquet").write_bytes(b"x")
    assert any("suite/data/v2-thirds/person.parquet" in p for p in check_release(release))


def test_a_suite_for_other_tasks_is_refused_and_leaves_no_release(made_suite, tmp_path):
    tasks = sample_tasks()
    task_file = write_inputs(tmp_path / "in", tasks, fingerprint=made_suite.base_fingerprint)
    suite = suite_for(made_suite, tmp_path / "suite", tasks[:-1])
    with pytest.raises(SuiteError, match="another task set"):
        publish(
            task_file,
            "0.1.0",
            tmp_path / "releases",
            database_columns=DATABASE_COLUMNS,
            suite_dir=suite,
        )
    assert not (tmp_path / "releases" / "omop" / "0.1.0").exists()
