"""Versioned releases of a curated task set, in the layout the Hugging Face Hub loads.

``publish`` turns ``data/benchmark/<name>_tasks.jsonl`` (the source of truth, JSONL)
and its curation report into an immutable folder ``<releases>/<name>/<version>/``::

    README.md                  dataset card: YAML header (configs, dataset_info, ...) + text
    manifest.json              sha256 of every file, item and set hashes, the split
    tasks/train.parquet        config "tasks" (default), split train
    tasks/test.parquet         config "tasks", split test
    database/columns.parquet   config "database", split columns: table, column, type, rows
    suite/                     with ``--suite``: the test suite built for these tasks
                               (suite.json, its report, data/**.parquet; release_suite.py)

``datasets.load_dataset(folder)`` loads it with no loading script; pushed to the Hub
and tagged ``v<version>``, ``load_dataset(repo, revision="v<version>")`` loads the
same.  An empty split (e.g. ``train`` at test fraction 1.0) is left out: ``datasets``
cannot load a split with no rows.

The Parquet representation of a task is :mod:`score.inputs.release_rows`; the dataset card
is :mod:`curate.publish.card`.

**Immutability**: an existing version is never rewritten.  Publishing it again with
the same content (tasks, split, database schema, Parquet features, dataset card) is a
no-op; with different content it is an error naming what differs.  Parquet bytes are
deterministic for a given pyarrow/datasets (checked by the tests) but are not part of
the comparison, so a library upgrade alone does not make a version "different".
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.publish.card import (
    DATABASE_CONFIG,
    DATABASE_SPLIT,
    README_NAME,
    TASKS_CONFIG,
    ConfigPart,
    card_body,
    card_languages,
    card_yaml,
    check_card,
    render_card,
    size_category,
)
from curate.publish.errors import fail
from curate.publish.inputs import check_database_columns, check_report, read_report
from curate.publish.release_suite import copy_suite, suite_card, suite_for_release, suite_manifest
from curate.publish.task_diff import diff_tasks, render_markdown
from curate.publish.versions import (
    check_card_fields,
    default_report_path,
    previous_version,
    release_name,
    release_versions,
    tag_for,
    version_key,
)
from score.errors import SqlgoldError
from score.files import file_sha256
from score.inputs.release_rows import (
    database_features,
    task_features,
    task_to_row,
    write_parquet,
)
from score.inputs.split import SPLITS, split_tasks
from score.inputs.task_manifest import (
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    canonical_json,
    compare_hashes,
    manifest_items,
    read_manifest,
    sha256_text,
)
from score.inputs.task_set import load_tasks, read_release
from score.suite.suite_file import MANIFEST, Suite

# --- writing and checking a release -----------------------------------------------------


def records_sha256(tasks: Sequence[Mapping[str, Any]]) -> str:
    """sha256 of the tasks' canonical JSON lines, in order (every field, not only the item's)."""
    return sha256_text("".join(canonical_json(t) + "\n" for t in tasks))


def check_release(folder: Path) -> list[str]:
    """Offline checks of a release folder, each problem as one line (empty: all good):
    the card (:func:`curate.publish.card.check_card`), then every file against its
    sha256 in the manifest, with no file missing or unlisted."""
    problems = check_card(folder)
    try:
        manifest = read_manifest(folder)
    except SqlgoldError as e:
        return [*problems, str(e)]
    return problems + check_files(folder, manifest)


def check_files(folder: Path, manifest: Mapping[str, Any]) -> list[str]:
    """Files of a release folder that are missing, unlisted or not their manifest sha256."""
    listed = set(manifest["files"])
    present = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.relative_to(folder).as_posix() != MANIFEST_NAME
    }
    problems = [f"{rel} is not in the manifest" for rel in sorted(present - listed)]
    for rel in sorted(listed):
        if rel not in present:
            problems.append(f"{rel} is in the manifest but missing")
        elif file_sha256(folder / rel) != manifest["files"][rel]:
            problems.append(f"{rel} does not match its sha256 in the manifest")
    return problems


@dataclass(frozen=True)
class PublishResult:
    """Where the release is, and whether this call wrote it (False: identical, a no-op)."""

    path: Path
    name: str
    version: str
    created: bool
    manifest: dict[str, Any]


def build_release(
    folder: Path,
    *,
    name: str,
    version: str,
    tasks: Sequence[Mapping[str, Any]],
    tasks_file: str,
    report: Mapping[str, Any],
    database_columns: Sequence[Mapping[str, Any]],
    test_fraction: float,
    seed: int,
    license: str,
    pretty_name: str,
    repo_id: str | None,
    previous: tuple[str, Path] | None,
    homepage: str | None = None,
    suite: Suite | None = None,
) -> dict[str, Any]:
    """Write every file of a release into the empty ``folder`` (with ``suite``, a copy
    of it in ``suite/``); return its manifest."""
    splits = split_tasks(tasks, test_fraction=test_fraction, seed=seed)
    task_feats, db_feats = task_features(), database_features()
    task_splits: dict[str, tuple[str, int, int]] = {}
    for split in SPLITS:
        if splits[split]:
            rel = f"{TASKS_CONFIG}/{split}.parquet"
            rows = [task_to_row(t) for t in splits[split]]
            task_splits[split] = (rel, len(rows), write_parquet(rows, task_feats, folder / rel))
    db_rel = f"{DATABASE_CONFIG}/{DATABASE_SPLIT}.parquet"
    db_bytes = write_parquet(database_columns, db_feats, folder / db_rel)
    parts = [
        ConfigPart(TASKS_CONFIG, task_feats, task_splits),
        ConfigPart(
            DATABASE_CONFIG, db_feats, {DATABASE_SPLIT: (db_rel, len(database_columns), db_bytes)}
        ),
    ]
    split_ids = {s: [t["id"] for t in splits[s]] for s in SPLITS}
    if previous is None:
        changelog = "First release."
    else:
        old_version, old_folder = previous
        old_tasks, old_splits = read_release(old_folder)
        diff = diff_tasks(old_tasks, tasks, old_splits=old_splits, new_splits=split_ids)
        changelog = render_markdown(diff, tag_for(old_version), tag_for(version))
    items = manifest_items(tasks)
    yaml_text = card_yaml(
        parts=parts,
        default=TASKS_CONFIG,
        license=license,
        languages=card_languages(tasks),
        size=size_category(len(tasks)),
        pretty_name=pretty_name,
    )
    body = card_body(
        name=name,
        version=version,
        pretty_name=pretty_name,
        report=report,
        splits=splits,
        test_fraction=test_fraction,
        seed=seed,
        database_columns=database_columns,
        changelog=changelog,
        set_sha256=items["set_sha256"],
        repo_id=repo_id,
        homepage=homepage,
        suite_text=suite_card(suite),
    )
    card = render_card(yaml_text, body)
    (folder / README_NAME).write_bytes(card.encode("utf-8"))
    if suite is not None:
        copy_suite(suite, folder)
    files = {
        p.relative_to(folder).as_posix(): file_sha256(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
    db = report["database"]
    manifest = {
        "format": MANIFEST_FORMAT,
        "name": name,
        "version": version,
        "tag": tag_for(version),
        "previous_version": previous[0] if previous else None,
        "tasks_file": tasks_file,
        "database": {
            "name": db.get("name") or Path(str(db["path"])).stem,
            "fingerprint": db["fingerprint"],
            "schema": db["schema"],
        },
        "split": {"test_fraction": test_fraction, "seed": seed, **split_ids},
        **items,
        "content": {
            "records_sha256": records_sha256(tasks),
            "set_sha256": items["set_sha256"],
            "split_sha256": sha256_text(canonical_json(split_ids)),
            "database_sha256": sha256_text(canonical_json(list(database_columns))),
            "features_sha256": sha256_text(
                canonical_json({"tasks": task_feats.to_dict(), "database": db_feats.to_dict()})
            ),
            "card_sha256": files[README_NAME],
            **({"suite_sha256": file_sha256(suite.folder / MANIFEST)} if suite else {}),
        },
        **({"suite": suite_manifest(suite)} if suite is not None else {}),
        "files": files,
    }
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (folder / MANIFEST_NAME).write_bytes(text.encode("utf-8"))
    return manifest


def compare_releases(existing: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between a published version's manifest and a new build of it.

    >>> old = {"items": {"a": "1", "b": "2"}, "content": {"card_sha256": "x"}}
    >>> compare_releases(old, {"items": {"a": "1", "b": "2"}, "content": {"card_sha256": "x"}})
    []
    >>> compare_releases(old, {"items": {"a": "9", "c": "3"}, "content": {"card_sha256": "y"}})
    ['items: changed a; added c; removed b', 'dataset card']
    """
    differences = []
    changes = compare_hashes(new.get("items", {}), existing.get("items", {}))
    if changes.ids:
        differences.append("items: " + changes.describe())
    old_content, new_content = existing.get("content", {}), new.get("content", {})
    labels = {
        "records_sha256": "task records (fields outside the item hash)",
        "split_sha256": "split",
        "database_sha256": "database schema",
        "features_sha256": "Parquet features",
        "card_sha256": "dataset card",
        "suite_sha256": "test suite",
    }
    for key, label in labels.items():
        if old_content.get(key) != new_content.get(key):
            if key == "records_sha256" and changes.ids:
                continue
            differences.append(label)
    return differences


def publish(
    tasks_path: str | Path,
    version: str,
    releases_dir: str | Path,
    *,
    database_columns: Sequence[Mapping[str, Any]],
    report_path: str | Path | None = None,
    database_fingerprint: str | None = None,
    test_fraction: float = 0.5,
    seed: int = 0,
    license: str = "apache-2.0",
    pretty_name: str | None = None,
    repo_id: str | None = None,
    homepage: str | None = None,
    suite_dir: str | Path | None = None,
) -> PublishResult:
    """Publish ``tasks_path`` as ``<releases_dir>/<name>/<version>/`` (see the module docstring).

    The folder is built beside its final place and renamed into it only once complete
    and checked (:func:`check_release`), so a failure never leaves a partial version.
    ``database_columns`` are ``{table, column, type, rows}`` rows of the database the
    tasks were verified on; ``database_fingerprint``, when given, must be the report's.
    ``suite_dir`` is a test suite built for these tasks on that database, released in
    ``suite/``.
    """
    tasks_path, releases_dir = Path(tasks_path), Path(releases_dir)
    version_key(version)
    name = release_name(tasks_path)
    check_card_fields(license=license, pretty_name=pretty_name, repo_id=repo_id, homepage=homepage)
    report_file = Path(report_path) if report_path else default_report_path(tasks_path)
    tasks = load_tasks(tasks_path)
    report = read_report(report_file)
    check_report(report, tasks, fingerprint=database_fingerprint, path=str(report_file))
    columns = check_database_columns(database_columns)
    suite = None
    if suite_dir is not None:
        suite = suite_for_release(suite_dir, tasks, report["database"]["fingerprint"])
    name_dir = releases_dir / name
    target = name_dir / version
    others = [v for v in release_versions(name_dir) if v != version]
    prev = previous_version(others, version)
    name_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{version}.tmp-", dir=name_dir))
    try:
        manifest = build_release(
            staging,
            name=name,
            version=version,
            tasks=tasks,
            tasks_file=tasks_path.name,
            report=report,
            database_columns=columns,
            test_fraction=test_fraction,
            seed=seed,
            license=license,
            pretty_name=pretty_name
            or report.get("title")
            or f"sqlgold {name}: text-to-SQL over OMOP CDM",
            repo_id=repo_id,
            previous=(prev, name_dir / prev) if prev else None,
            homepage=homepage,
            suite=suite,
        )
        problems = check_release(staging)
        if problems:
            raise fail("the release does not check out: " + "; ".join(problems))
        if not target.exists():
            try:
                os.rename(staging, target)
                return PublishResult(target, name, version, True, manifest)
            except OSError:
                if not target.exists():
                    raise
        return _existing(target, manifest, name, version)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _existing(target: Path, manifest: dict[str, Any], name: str, version: str) -> PublishResult:
    """Republishing a version: a no-op when identical, an error when not."""
    try:
        existing = read_manifest(target)
    except SqlgoldError as e:
        raise fail(f"{target} exists but is not a release: {e}") from e
    differences = compare_releases(existing, manifest)
    if differences:
        raise fail(
            f"version {version} of {name} is already published with different content "
            f"({'; '.join(differences)}); versions are immutable: publish a new version",
            path=str(target),
        )
    tampered = check_files(target, existing)
    if tampered:
        raise fail(f"the published folder was modified: {'; '.join(tampered)}", path=str(target))
    return PublishResult(target, name, version, False, existing)
