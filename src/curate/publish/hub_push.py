"""Pushing a release folder to the Hugging Face Hub and tagging exactly that commit.

``push_release(folder, "org/omop-text2sql")`` does, with ``huggingface_hub.HfApi``:

1. ``create_repo(repo_id, repo_type="dataset", exist_ok=True)``;
2. if the tag ``v<version>`` already exists, reads that commit's ``manifest.json``: the
   same content is a no-op, different content is an error (versions are immutable);
3. ``upload_folder(...)`` with exactly the files the release's manifest lists (plus the
   manifest), deleting remote files under the release's data folders that this version
   does not have (e.g. an earlier version's split that is now empty);
4. ``create_tag(repo_id, tag="v<version>", revision=<the upload's commit oid>)``, so the
   tag names the commit that was uploaded even if someone pushes right after.

Before anything is sent, the folder is checked against its own manifest (every file's
sha256, no file missing or extra).  Authentication is huggingface_hub's own (the
``HF_TOKEN`` variable or a saved login); this module never reads a token.  The Hub
validates the dataset card's YAML on upload; the offline checks are
:func:`curate.publish.release.check_release`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.publish.release import check_files, compare_releases
from score.errors import SqlgoldError
from score.inputs.task_manifest import MANIFEST_NAME, read_manifest

STAGE = "push"
REPO_TYPE = "dataset"


def fail(message: str, **where: Any) -> SqlgoldError:
    return SqlgoldError(message, stage=STAGE, **where)


@dataclass(frozen=True)
class PushResult:
    """What was pushed: the repo, the tag, the commit it names, and the files uploaded.

    ``created`` is False when the tag already named identical content (nothing sent).
    """

    repo_id: str
    tag: str
    commit: str
    files: tuple[str, ...]
    created: bool


def upload_list(manifest: Mapping[str, Any]) -> list[str]:
    """The paths to upload: every file of the manifest, and the manifest itself.

    >>> upload_list({"files": {"tasks/test.parquet": "x", "README.md": "y"}})
    ['README.md', 'manifest.json', 'tasks/test.parquet']
    """
    return sorted({*manifest["files"], MANIFEST_NAME})


def data_folders(manifest: Mapping[str, Any]) -> list[str]:
    """Delete patterns for the release's data folders (remote files there not uploaded go).

    >>> data_folders({"files": {"tasks/test.parquet": "x", "database/c.parquet": "y",
    ...                         "README.md": "z"}})
    ['database/*', 'tasks/*']
    """
    return sorted({f"{rel.split('/')[0]}/*" for rel in manifest["files"] if "/" in rel})


def tagged_manifest(api: Any, repo_id: str, tag: str) -> tuple[dict[str, Any], str] | None:
    """The manifest at ``tag`` on the Hub and the commit the tag names, or None if no tag."""
    refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    for ref in refs.tags:
        if ref.name == tag:
            try:
                local = api.hf_hub_download(
                    repo_id, MANIFEST_NAME, repo_type=REPO_TYPE, revision=ref.target_commit
                )
            except Exception as e:  # EntryNotFoundError and friends: say what the tag holds
                raise fail(
                    f"{repo_id} already has tag {tag}, but no readable {MANIFEST_NAME} "
                    f"at it ({type(e).__name__}); refusing to move or reuse the tag"
                ) from e
            return read_manifest(local), ref.target_commit
    return None


def push_release(
    folder: str | Path,
    repo_id: str,
    *,
    api: Any = None,
    private: bool | None = None,
) -> PushResult:
    """Upload the release ``folder`` to the dataset repo ``repo_id`` and tag it (see above).

    ``api`` is an ``HfApi`` (a new one by default); tests pass
    ``unittest.mock.create_autospec(HfApi)``.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    folder = Path(folder)
    manifest = read_manifest(folder)
    problems = check_files(folder, manifest)
    if problems:
        raise fail(
            f"the release folder does not match its manifest: {'; '.join(problems)}",
            path=str(folder),
        )
    api = api if api is not None else HfApi()
    tag, files = manifest["tag"], upload_list(manifest)
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, exist_ok=True, private=private)
        existing = tagged_manifest(api, repo_id, tag)
        if existing is not None:
            remote, commit = existing
            differences = compare_releases(remote, manifest)
            if differences:
                raise fail(
                    f"{repo_id} already has {tag} with different content "
                    f"({'; '.join(differences)}); versions are immutable: publish a new version"
                )
            return PushResult(repo_id, tag, commit, tuple(files), created=False)
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type=REPO_TYPE,
            allow_patterns=files,
            delete_patterns=data_folders(manifest),
            commit_message=f"Release {tag} of {manifest['name']}",
            commit_description=f"sqlgold release {manifest['name']} {manifest['version']}, "
            f"task set sha256 {manifest['set_sha256']}",
        )
        api.create_tag(
            repo_id,
            tag=tag,
            revision=info.oid,
            repo_type=REPO_TYPE,
            tag_message=f"{manifest['name']} {manifest['version']}",
        )
    except (HfHubHTTPError, OSError, ValueError) as e:
        raise fail(f"pushing {tag} to {repo_id} failed: {e}") from e
    return PushResult(repo_id, tag, info.oid, tuple(files), created=True)
