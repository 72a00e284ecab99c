"""Content hashes of task items, and the check that a task file still matches its release.

A published version pins its tasks by hashing what makes an item the item it is: its
id, its question in English and in every language, its gold SQL, tier, order flag,
answerable flag, category, the day it was verified under (``today``) and the hash of the
gold result it was verified with (``gold_result.sha256``) (:data:`ITEM_FIELDS`; a dotted
name is a field inside an object).  Each item's hash is the sha256 of the canonical
JSON of those fields (keys sorted, no spaces, UTF-8, a missing field as ``null``); the
set hash is the sha256 over ``"<id>\\t<item hash>\\n"`` lines sorted by id, so it does
not depend on the order of the file.  Any change to one of these fields of one item
changes that item's hash and the set hash: it is a new task version.  Fields outside
the hash (features, the gold result's row count and column names, notes, ...) describe
an item without changing what it asks or how it is scored; the release manifest pins
them through its file hashes.  A task file carries the set hash in its header
(:mod:`score.inputs.task_file`), so a hand-edited gold is refused without any manifest.

The scorer refuses a task file whose items no longer match the manifest it is scored
against, naming the items that changed (:func:`verify_tasks`).  This module is pure and
lives in ``score`` so that scoring can check a release without importing ``curate``.

>>> task = {"id": "q1", "question": "How many persons?", "questions": {"en": "How many persons?"},
...         "gold_sql": "SELECT count(*) FROM cdm.person", "tier": "simple",
...         "order_matters": False, "answerable": True, "category": None, "today": None,
...         "gold_result": {"sha256": "ab" * 32}}
>>> m = manifest_items([task])
>>> check_manifest([task], m)
[]
>>> check_manifest([dict(task, gold_sql="SELECT 1")], m)
['q1']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from score.errors import InputError
from score.inputs.jsonl import read_text

#: The format a release manifest carries; readers refuse any other.
MANIFEST_FORMAT = "sqlgold.manifest/2"
KNOWN_MANIFEST_FORMATS: frozenset[str] = frozenset({MANIFEST_FORMAT})

#: Manifest formats this sqlgold refuses with a hint: format -> what to do.
RETIRED_MANIFEST_FORMATS = {
    "sqlgold.manifest/1": "a release of format 1 pins neither the day nor the gold result "
    "its tasks were verified on; publish a new version from a re-curated task file",
}

#: The file name of the manifest inside a release folder.
MANIFEST_NAME = "manifest.json"

#: The task fields an item hash covers, in the order they are listed in a manifest.
ITEM_FIELDS: tuple[str, ...] = (
    "id",
    "question",
    "questions",
    "gold_sql",
    "tier",
    "order_matters",
    "answerable",
    "category",
    "today",
    "gold_result.sha256",
)


def item_field(task: Mapping[str, Any], name: str) -> Any:
    """The value of an item field; a dotted name reads inside an object (None if absent).

    >>> item_field({"gold_result": {"sha256": "ab"}}, "gold_result.sha256")
    'ab'
    >>> item_field({"gold_result": None}, "gold_result.sha256") is None
    True
    """
    value: Any = task
    for part in name.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def canonical_json(value: Any) -> str:
    """The one JSON text of a value that hashes use: sorted keys, no spaces, UTF-8 as is.

    >>> canonical_json({"b": [1, None], "a": "é"})
    '{"a":"é","b":[1,null]}'
    """
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes.

    >>> sha256_text("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_hash(task: Mapping[str, Any]) -> str:
    """The content hash of one item: sha256 of the canonical JSON of its :data:`ITEM_FIELDS`.

    A field the task lacks counts as ``null``; fields outside :data:`ITEM_FIELDS` do
    not matter, and neither does key order.  A task with alternative golds (format 1.2)
    also hashes each one's gold SQL and result hash, in order, under
    ``alternative_golds``.

    >>> t = {"id": "q1", "question": "Q?", "questions": {"en": "Q?"}, "gold_sql": "SELECT 1",
    ...      "tier": "simple", "order_matters": False, "answerable": True, "category": None,
    ...      "today": None, "gold_result": {"rows": 1, "sha256": "ab" * 32}}
    >>> item_hash(t) == item_hash(dict(reversed(t.items()), notes="irrelevant"))
    True
    >>> item_hash(t) == item_hash(dict(t, order_matters=True))
    False
    >>> item_hash(t) == item_hash(dict(t, today="2025-12-31"))
    False
    >>> item_hash(t) == item_hash(dict(t, gold_result={"rows": 1, "sha256": "cd" * 32}))
    False
    >>> item_hash(t) == item_hash(dict(t, gold_result={"rows": 2, "sha256": "ab" * 32}))
    True
    """
    fields = {f: item_field(task, f) for f in ITEM_FIELDS}
    alternatives = task.get("alternative_golds")
    if alternatives:  # format 1.2: a task without them hashes as before
        fields["alternative_golds"] = [
            [a.get("gold_sql"), item_field(a, "gold_result.sha256")] for a in alternatives
        ]
    return sha256_text(canonical_json(fields))


def item_hashes(tasks: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Task id -> item hash, sorted by id; refuses a missing or repeated id.

    >>> list(item_hashes([{"id": "b"}, {"id": "a"}]))
    ['a', 'b']
    """
    hashes: dict[str, str] = {}
    for task in tasks:
        task_id = task.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise InputError("a task has no id", stage="manifest")
        if task_id in hashes:
            raise InputError("duplicate task id", stage="manifest", task_id=task_id)
        hashes[task_id] = item_hash(task)
    return dict(sorted(hashes.items()))


def set_hash_of(hashes: Mapping[str, str]) -> str:
    """The set hash of id -> item hash pairs: sha256 over ``"<id>\\t<hash>\\n"`` sorted by id.

    >>> set_hash_of({}) == sha256_text("")
    True
    """
    return sha256_text("".join(f"{i}\t{hashes[i]}\n" for i in sorted(hashes)))


def set_hash(tasks: Iterable[Mapping[str, Any]]) -> str:
    """The content hash of a whole task set; independent of the order of the tasks.

    >>> a, b = {"id": "a", "tier": "simple"}, {"id": "b", "tier": "simple"}
    >>> set_hash([a, b]) == set_hash([b, a]) != set_hash([a])
    True
    """
    return set_hash_of(item_hashes(tasks))


def manifest_items(tasks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The item part of a manifest: the fields hashed, every item's hash and the set hash.

    >>> sorted(manifest_items([]))
    ['item_fields', 'items', 'set_sha256']
    """
    hashes = item_hashes(tasks)
    return {"item_fields": list(ITEM_FIELDS), "items": hashes, "set_sha256": set_hash_of(hashes)}


@dataclass(frozen=True)
class ItemChanges:
    """Ids of items that differ between a task set and a manifest, each list sorted."""

    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def ids(self) -> list[str]:
        return sorted({*self.changed, *self.added, *self.removed})

    def describe(self) -> str:
        """One line naming the items, e.g. ``changed q3; added q9; removed q2``.

        >>> ItemChanges(("q3",), (), ("q1", "q2")).describe()
        'changed q3; removed q1, q2'
        """
        parts = [
            f"{label} {', '.join(ids)}"
            for label, ids in (
                ("changed", self.changed),
                ("added", self.added),
                ("removed", self.removed),
            )
            if ids
        ]
        return "; ".join(parts)


def compare_hashes(now: Mapping[str, str], pinned: Mapping[str, str]) -> ItemChanges:
    """Which ids changed, were added or were removed between two id -> item hash maps.

    >>> compare_hashes({"a": "1", "c": "3"}, {"a": "2", "b": "2"})
    ItemChanges(changed=('a',), added=('c',), removed=('b',))
    """
    return ItemChanges(
        changed=tuple(sorted(i for i in now if i in pinned and now[i] != pinned[i])),
        added=tuple(sorted(i for i in now if i not in pinned)),
        removed=tuple(sorted(i for i in pinned if i not in now)),
    )


def compare_items(tasks: Iterable[Mapping[str, Any]], manifest: Mapping[str, Any]) -> ItemChanges:
    """Which items of ``tasks`` changed, were added or were removed against ``manifest``.

    >>> m = manifest_items([{"id": "a"}, {"id": "b"}])
    >>> compare_items([{"id": "a", "tier": "simple"}, {"id": "c"}], m)
    ItemChanges(changed=('a',), added=('c',), removed=('b',))
    """
    return compare_hashes(item_hashes(tasks), manifest.get("items", {}))


def check_manifest(tasks: Iterable[Mapping[str, Any]], manifest: Mapping[str, Any]) -> list[str]:
    """Sorted ids of the items that changed, were added or were removed (empty: it matches).

    >>> check_manifest([{"id": "a"}], manifest_items([{"id": "a"}, {"id": "b"}]))
    ['b']
    """
    return compare_items(tasks, manifest).ids


def check_manifest_object(manifest: Any, *, path: str | None = None) -> dict[str, Any]:
    """Refuse a manifest of an unknown format, hashed over other fields, or inconsistent.

    >>> check_manifest_object({"format": "sqlgold.manifest/9"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    score.errors.InputError: [manifest] unknown manifest format 'sqlgold.manifest/9' ...
    """

    def fail(message: str) -> InputError:
        return InputError(message, stage="manifest", path=path)

    if not isinstance(manifest, dict):
        raise fail("a manifest is a JSON object")
    fmt = manifest.get("format")
    if fmt not in KNOWN_MANIFEST_FORMATS:
        known = ", ".join(sorted(KNOWN_MANIFEST_FORMATS))
        hint = RETIRED_MANIFEST_FORMATS.get(str(fmt))
        raise fail(
            f"unknown manifest format {fmt!r} (this reader knows {known})"
            + (f": {hint}" if hint else "")
        )
    if list(manifest.get("item_fields", [])) != list(ITEM_FIELDS):
        raise fail(
            f"the manifest hashes items over {manifest.get('item_fields')}, "
            f"this sqlgold over {list(ITEM_FIELDS)}"
        )
    items = manifest.get("items")
    if not isinstance(items, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in items.items()
    ):
        raise fail("'items' must map task ids to item hashes")
    if set_hash_of(items) != manifest.get("set_sha256"):
        raise fail("the manifest's set_sha256 does not match its own item hashes")
    return manifest


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Read and check a release manifest (``manifest.json``, or the folder holding it)."""
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST_NAME
    try:
        manifest = json.loads(read_text(path, stage="manifest"))
    except FileNotFoundError:
        raise InputError("no manifest here", stage="manifest", path=str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read the manifest: {e}", stage="manifest", path=str(path)) from e
    return check_manifest_object(manifest, path=str(path))


def verify_tasks(
    tasks: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any],
    *,
    path: str | Path | None = None,
) -> None:
    """Raise :class:`InputError` naming every item that no longer matches ``manifest``.

    >>> m = dict(manifest_items([{"id": "a"}]), version="0.1.0")
    >>> verify_tasks([{"id": "a"}], m)
    >>> verify_tasks([{"id": "a", "tier": "x"}], m, path="t.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    score.errors.InputError: [manifest] t.jsonl: ... no longer matches release 0.1.0: changed a
    """
    changes = compare_items(tasks, manifest)
    if changes.ids:
        release = manifest.get("version", "?")
        raise InputError(
            f"the task file no longer matches release {release}: {changes.describe()}",
            stage="manifest",
            path=str(path) if path is not None else None,
        )
