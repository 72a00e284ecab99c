"""Release versions and names: semantic versions, their order, tags and folders."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from curate.publish.errors import fail

# matched whole (fullmatch: ``$`` alone also matches before a final newline, and
# "1.0.0\n" made a folder beside 1.0.0)
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
#: A Hub repository id (ORG/NAME), a license id, a homepage: what the card may name.
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")
_LICENSE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
_URL = re.compile(r"https?://[^\s<>\"`\\{}|^]{1,2000}")


def version_key(version: str) -> tuple:
    """A sort key giving semantic-version precedence (a pre-release sorts before its release).

    >>> sorted(["1.0.0", "0.10.0", "1.0.0-rc.1", "0.9.1", "1.0.0-alpha"], key=version_key)
    ['0.9.1', '0.10.0', '1.0.0-alpha', '1.0.0-rc.1', '1.0.0']
    >>> version_key("v1.0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    score.errors.SqlgoldError: [publish] 'v1.0' is not a semantic version like 0.1.0 ...
    """
    m = _SEMVER.fullmatch(version)
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
    return _SEMVER.fullmatch(text) is not None


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
    >>> release_name(Path("omop\\n_tasks.jsonl"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    score.errors.SqlgoldError: [publish] omop...: cannot use 'omop\\n' as a release name ...
    """
    stem = tasks_path.name.removesuffix(".jsonl")
    name = stem.removesuffix("_tasks") or stem
    if not _NAME.fullmatch(name):
        raise fail(
            f"cannot use {name!r} as a release name (the task file's name without _tasks.jsonl: "
            "letters, digits, '_', '.', '-', starting with a letter or digit)",
            path=str(tasks_path),
        )
    return name


def check_card_fields(
    *,
    license: str,
    pretty_name: str | None,
    repo_id: str | None,
    homepage: str | None,
    push_to: str | None = None,
) -> None:
    """Refuse what the dataset card (Markdown, YAML, a Python loading example) cannot
    hold as it is: a repository id other than ORG/NAME, a license id or homepage URL
    with other characters than theirs, a title with a line break or another control or
    bidi character (each would change what the card says or what its example runs).

    >>> check_card_fields(license="mit", pretty_name="x", repo_id='a/b")\\nimport os',
    ...                   homepage=None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    score.errors.SqlgoldError: [publish] --repo-id 'a/b")\\nimport os' is not a Hub repository id...
    """
    for option, value in (("--repo-id", repo_id), ("--push", push_to)):
        if value is not None and not _REPO_ID.fullmatch(value):
            raise fail(f"{option} {value!r} is not a Hub repository id like org/name")
    if not _LICENSE.fullmatch(license):
        raise fail(f"--license {license!r} is not a license id like apache-2.0")
    if homepage is not None and not _URL.fullmatch(homepage):
        raise fail(f"--homepage {homepage!r} is not an http(s) URL without spaces or quotes")
    if pretty_name is not None and (
        not pretty_name.strip() or len(pretty_name) > 200 or any(_hidden(c) for c in pretty_name)
    ):
        raise fail(
            f"--pretty-name {pretty_name[:80]!r} is not a one-line title (at most 200 "
            "characters, no control or bidi characters)"
        )


def _hidden(char: str) -> bool:
    """A control, format or line-separating character (a line break, U+202E ...)."""
    import unicodedata

    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")


def default_report_path(tasks_path: Path) -> Path:
    """The curation report beside a task file: ``omop_tasks.jsonl`` -> ``omop_report.json``.

    >>> default_report_path(Path("b/omop_tasks.jsonl")).as_posix()
    'b/omop_report.json'
    """
    return tasks_path.with_name(f"{release_name(tasks_path)}_report.json")
