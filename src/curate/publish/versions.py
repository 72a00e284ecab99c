"""Release versions and names: semantic versions, their order, tags and folders."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from curate.publish.errors import fail

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$"
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def version_key(version: str) -> tuple:
    """A sort key giving semantic-version precedence (a pre-release sorts before its release).

    >>> sorted(["1.0.0", "0.10.0", "1.0.0-rc.1", "0.9.1", "1.0.0-alpha"], key=version_key)
    ['0.9.1', '0.10.0', '1.0.0-alpha', '1.0.0-rc.1', '1.0.0']
    >>> version_key("v1.0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    score.errors.SqlgoldError: [publish] 'v1.0' is not a semantic version like 0.1.0 ...
    """
    m = _SEMVER.match(version)
    if not m:
        raise fail(
            f"{version!r} is not a semantic version like 0.1.0 (MAJOR.MINOR.PATCH, no leading v)"
        )
    major, minor, patch, pre = m.groups()
    if pre is None:
        return (int(major), int(minor), int(patch), 1, ())
    ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (int(major), int(minor), int(patch), 0, ids)


def is_version(text: str) -> bool:
    """Whether ``text`` is a version folder name.

    >>> is_version("0.1.0"), is_version(".0.1.0.tmp-x")
    (True, False)
    """
    return _SEMVER.match(text) is not None


def tag_for(version: str) -> str:
    """The git tag of a version on the Hub.

    >>> tag_for("0.1.0")
    'v0.1.0'
    """
    version_key(version)
    return f"v{version}"


def previous_version(versions: Sequence[str], version: str) -> str | None:
    """The highest of ``versions`` below ``version`` (the one its changelog is against).

    >>> previous_version(["0.1.0", "0.2.0", "1.0.0"], "0.3.0")
    '0.2.0'
    >>> previous_version(["0.2.0"], "0.1.0") is None
    True
    """
    key = version_key(version)
    below = [v for v in versions if version_key(v) < key]
    return max(below, key=version_key) if below else None


def release_versions(name_dir: Path) -> list[str]:
    """The versions already published under ``<releases>/<name>/``, in version order."""
    if not name_dir.is_dir():
        return []
    found = [p.name for p in name_dir.iterdir() if p.is_dir() and is_version(p.name)]
    return sorted(found, key=version_key)


def release_name(tasks_path: Path) -> str:
    """The release name of a task file: ``omop_tasks.jsonl`` -> ``omop``.

    >>> release_name(Path("data/benchmark/omop_tasks.jsonl"))
    'omop'
    >>> release_name(Path("mine.jsonl"))
    'mine'
    """
    stem = tasks_path.name.removesuffix(".jsonl")
    name = stem.removesuffix("_tasks") or stem
    if not _NAME.match(name):
        raise fail(f"cannot use {name!r} as a release name", path=str(tasks_path))
    return name


def default_report_path(tasks_path: Path) -> Path:
    """The curation report beside a task file: ``omop_tasks.jsonl`` -> ``omop_report.json``.

    >>> default_report_path(Path("b/omop_tasks.jsonl")).as_posix()
    'b/omop_report.json'
    """
    return tasks_path.with_name(f"{release_name(tasks_path)}_report.json")
