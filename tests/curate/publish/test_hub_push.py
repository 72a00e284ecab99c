"""Pushing a release to the Hub, offline: the real code against an autospec'd HfApi."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from unittest import mock

import click
import huggingface_hub
import pytest
from click.testing import CliRunner
from huggingface_hub import HfApi
from huggingface_hub.errors import EntryNotFoundError
from huggingface_hub.hf_api import CommitInfo, GitRefInfo, GitRefs
from huggingface_hub.utils import DEFAULT_IGNORE_PATTERNS, filter_repo_objects

from curate.publish.cli import publish_command
from curate.publish.hub_push import push_release
from curate.publish.release import publish
from score.errors import SqlgoldError
from tests.task_records import DATABASE_COLUMNS, answerable, sample_tasks, write_inputs

REPO_ID = "sqlgold/omop-text2sql"
UPLOADED = "a" * 40
TAGGED = "b" * 40
RELEASE_FILES = {
    "README.md",
    "manifest.json",
    "database/columns.parquet",
    "tasks/test.parquet",
    "tasks/train.parquet",
}


def make_release(tmp_path: Path, tasks=None, root="releases") -> Path:
    task_file = write_inputs(tmp_path / f"in-{root}", tasks or sample_tasks())
    return publish(task_file, "0.1.0", tmp_path / root, database_columns=DATABASE_COLUMNS).path


def hub(tags: list[GitRefInfo] | None = None):
    """An autospec'd HfApi: the real signatures, no network."""
    api = mock.create_autospec(HfApi, instance=True)
    api.list_repo_refs.return_value = GitRefs(branches=[], converts=[], tags=tags or [])
    api.upload_folder.return_value = CommitInfo(
        commit_url=f"https://huggingface.co/datasets/{REPO_ID}/commit/{UPLOADED}",
        commit_message="Release v0.1.0 of omop",
        commit_description="",
        oid=UPLOADED,
    )
    return api


def uploaded_files(folder: Path, upload_kwargs: dict) -> set[str]:
    """What upload_folder would send: huggingface_hub's own selection over the folder."""
    on_disk = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    ignore = list(upload_kwargs.get("ignore_patterns") or []) + DEFAULT_IGNORE_PATTERNS
    return set(
        filter_repo_objects(
            on_disk, allow_patterns=upload_kwargs["allow_patterns"], ignore_patterns=ignore
        )
    )


def test_push_creates_uploads_and_tags_the_uploaded_commit(tmp_path):
    folder = make_release(tmp_path)
    api = hub()
    result = push_release(folder, REPO_ID, api=api)

    assert [c[0] for c in api.mock_calls] == [
        "create_repo",
        "list_repo_refs",
        "upload_folder",
        "create_tag",
    ]
    api.create_repo.assert_called_once_with(
        REPO_ID, repo_type="dataset", exist_ok=True, private=None
    )
    api.list_repo_refs.assert_called_once_with(REPO_ID, repo_type="dataset")
    upload = api.upload_folder.call_args.kwargs
    assert upload["repo_id"] == REPO_ID and upload["repo_type"] == "dataset"
    assert Path(upload["folder_path"]) == folder
    assert upload["delete_patterns"] == ["database/*", "tasks/*"]
    assert upload["commit_message"] == "Release v0.1.0 of omop"
    assert uploaded_files(folder, upload) == RELEASE_FILES
    api.create_tag.assert_called_once_with(
        REPO_ID, tag="v0.1.0", revision=UPLOADED, repo_type="dataset", tag_message="omop 0.1.0"
    )
    assert result.created and result.commit == UPLOADED and result.tag == "v0.1.0"
    assert set(result.files) == RELEASE_FILES


def test_an_empty_split_is_not_uploaded_and_its_old_file_goes(tmp_path):
    task_file = write_inputs(tmp_path / "in", sample_tasks())
    folder = publish(
        task_file, "0.1.0", tmp_path / "r", database_columns=DATABASE_COLUMNS, test_fraction=1.0
    ).path
    api = hub()
    push_release(folder, REPO_ID, api=api)
    upload = api.upload_folder.call_args.kwargs
    assert uploaded_files(folder, upload) == RELEASE_FILES - {"tasks/train.parquet"}
    assert "tasks/*" in upload["delete_patterns"]  # a train.parquet of an earlier version


def test_a_tag_with_the_same_content_is_a_no_op(tmp_path):
    folder = make_release(tmp_path)
    remote = tmp_path / "remote-manifest.json"
    shutil.copy(folder / "manifest.json", remote)
    api = hub(tags=[GitRefInfo(name="v0.1.0", ref="refs/tags/v0.1.0", target_commit=TAGGED)])
    api.hf_hub_download.return_value = str(remote)
    result = push_release(folder, REPO_ID, api=api)
    assert not result.created and result.commit == TAGGED
    api.hf_hub_download.assert_called_once_with(
        REPO_ID, "manifest.json", repo_type="dataset", revision=TAGGED
    )
    api.upload_folder.assert_not_called()
    api.create_tag.assert_not_called()


def test_a_tag_with_other_content_is_refused(tmp_path):
    folder = make_release(tmp_path)
    other_tasks = sample_tasks()[1:] + [answerable("sim-999")]
    other = make_release(tmp_path, other_tasks, root="other")
    api = hub(tags=[GitRefInfo(name="v0.1.0", ref="refs/tags/v0.1.0", target_commit=TAGGED)])
    api.hf_hub_download.return_value = str(other / "manifest.json")
    with pytest.raises(SqlgoldError) as e:
        push_release(folder, REPO_ID, api=api)
    message = str(e.value)
    assert message.startswith(f"[push] {REPO_ID} already has v0.1.0 with different content")
    assert "items: added cmp-001; removed sim-999" in message  # local against the tagged one
    api.upload_folder.assert_not_called()
    api.create_tag.assert_not_called()


def test_a_tag_without_a_manifest_is_refused(tmp_path):
    folder = make_release(tmp_path)
    api = hub(tags=[GitRefInfo(name="v0.1.0", ref="refs/tags/v0.1.0", target_commit=TAGGED)])
    api.hf_hub_download.side_effect = EntryNotFoundError("manifest.json")
    with pytest.raises(SqlgoldError, match=r"^\[push\] .* already has tag v0\.1\.0, but no"):
        push_release(folder, REPO_ID, api=api)
    api.upload_folder.assert_not_called()


def test_other_tags_do_not_matter(tmp_path):
    folder = make_release(tmp_path)
    api = hub(tags=[GitRefInfo(name="v0.0.9", ref="refs/tags/v0.0.9", target_commit=TAGGED)])
    assert push_release(folder, REPO_ID, api=api).created
    api.hf_hub_download.assert_not_called()


def test_a_failed_upload_is_a_push_error_and_tags_nothing(tmp_path):
    folder = make_release(tmp_path)
    api = hub()
    api.upload_folder.side_effect = OSError("connection reset")
    with pytest.raises(SqlgoldError, match=r"^\[push\] pushing v0\.1\.0 to .* connection reset"):
        push_release(folder, REPO_ID, api=api)
    api.create_tag.assert_not_called()


@pytest.mark.parametrize("tamper", ["extra", "edit", "missing"])
def test_a_folder_that_drifted_from_its_manifest_is_not_pushed(tmp_path, tamper):
    folder = make_release(tmp_path)
    if tamper == "extra":
        (folder / "notes.txt").write_text("scratch", encoding="utf-8")
    elif tamper == "edit":
        (folder / "README.md").write_text("# edited", encoding="utf-8")
    else:
        (folder / "tasks" / "test.parquet").unlink()
    api = hub()
    with pytest.raises(SqlgoldError, match=r"^\[push\] .* does not match its manifest"):
        push_release(folder, REPO_ID, api=api)
    assert api.mock_calls == []


def test_cli_publish_then_push(tmp_path, omop_db, monkeypatch):
    from score.cdm.duckdb_file import describe_database

    api = hub()
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: api)
    info = describe_database(omop_db)
    task_file = write_inputs(tmp_path / "bench", sample_tasks(), fingerprint=info.fingerprint)

    @click.group()
    def main() -> None:
        pass

    main.add_command(publish_command)
    args = ["publish", str(task_file), "--version", "0.1.0", "--db", str(omop_db)]
    args += ["--out", str(tmp_path / "releases"), "--push", REPO_ID]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"pushed v0.1.0 to {REPO_ID} (commit {UPLOADED})"
    folder = tmp_path / "releases" / "omop" / "0.1.0"
    assert uploaded_files(folder, api.upload_folder.call_args.kwargs) == RELEASE_FILES
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    api.create_tag.assert_called_once_with(
        REPO_ID,
        tag=manifest["tag"],
        revision=UPLOADED,
        repo_type="dataset",
        tag_message="omop 0.1.0",
    )
