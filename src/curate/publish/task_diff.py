"""What changed between two versions of a task set: added, removed and changed tasks.

Tasks are matched by id.  A changed task lists the fields that differ; for a field
whose value is an object on both sides (``questions``, ``features``, ``gold_result``,
``unanswerable_because``) the changed keys are named one level down, e.g.
``questions.ko`` or ``features.join_count``.  A field that is absent counts as
``null``, so a task file that leaves out ``notes`` and a release that loads it as null
do not differ.  When both sides carry their split, tasks that moved between ``train``
and ``test`` are listed too (a task moving from train to test had its SQL shown as an
example before: worth knowing).

The diff is pure; :func:`render_markdown` writes it as the changelog of a release's
dataset card and as the output of ``sqlgold diff``.

>>> old = [{"id": "a", "gold_sql": "SELECT 1"}, {"id": "b"}]
>>> new = [{"id": "a", "gold_sql": "SELECT 2"}, {"id": "c"}]
>>> d = diff_tasks(old, new)
>>> d.added, d.removed, d.changed
(('c',), ('b',), {'a': ('gold_sql',)})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from score.errors import SqlgoldError

STAGE = "diff"


@dataclass(frozen=True)
class TaskDiff:
    """Ids added, removed, changed (with their changed fields) and moved between splits."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.moved)

    def summary(self) -> str:
        """Counts in words.

        >>> TaskDiff(added=("a",), changed={"b": ("tier",)}).summary()
        '1 added, 0 removed, 1 changed'
        """
        text = f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed"
        if self.moved:
            text += f", {len(self.moved)} moved between splits"
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (lists instead of tuples).

        >>> TaskDiff(moved={"a": ("train", "test")}).to_dict()["moved"]
        {'a': ['train', 'test']}
        """
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": {k: list(v) for k, v in self.changed.items()},
            "moved": {k: list(v) for k, v in self.moved.items()},
        }


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields that differ between two versions of one task, sorted.

    >>> changed_fields({"questions": {"en": "Q"}, "notes": None},
    ...                {"questions": {"en": "Q", "ko": "질문"}})
    ('questions.ko',)
    >>> changed_fields({"gold_result": None}, {"gold_result": {"rows": 1}})
    ('gold_result',)
    """
    paths: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            paths.extend(
                f"{key}.{sub}" for sub in sorted(set(a) | set(b)) if a.get(sub) != b.get(sub)
            )
        else:
            paths.append(key)
    return tuple(paths)


def by_id(tasks: Iterable[Mapping[str, Any]], side: str) -> dict[str, Mapping[str, Any]]:
    """Tasks keyed by id; refuses a missing or repeated id."""
    out: dict[str, Mapping[str, Any]] = {}
    for task in tasks:
        task_id = task.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise SqlgoldError(f"a task of the {side} side has no id", stage=STAGE)
        if task_id in out:
            raise SqlgoldError(f"duplicate id on the {side} side", stage=STAGE, task_id=task_id)
        out[task_id] = task
    return out


def split_of(splits: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Task id -> split name, from split name -> ids.

    >>> split_of({"train": ["a"], "test": ["b"]})
    {'a': 'train', 'b': 'test'}
    """
    return {task_id: name for name, ids in splits.items() for task_id in ids}


def diff_tasks(
    old: Iterable[Mapping[str, Any]],
    new: Iterable[Mapping[str, Any]],
    *,
    old_splits: Mapping[str, Sequence[str]] | None = None,
    new_splits: Mapping[str, Sequence[str]] | None = None,
) -> TaskDiff:
    """Compare two task sets by id (see the module docstring).

    ``old_splits`` / ``new_splits`` map split names to task ids; when both are given,
    tasks present on both sides whose split differs are listed in ``moved``.

    >>> diff_tasks([{"id": "a"}], [{"id": "a"}], old_splits={"train": ["a"]},
    ...            new_splits={"test": ["a"]}).moved
    {'a': ('train', 'test')}
    """
    before, after = by_id(old, "old"), by_id(new, "new")
    changed = {}
    for task_id in sorted(before.keys() & after.keys()):
        fields = changed_fields(before[task_id], after[task_id])
        if fields:
            changed[task_id] = fields
    moved: dict[str, tuple[str, str]] = {}
    if old_splits is not None and new_splits is not None:
        was, now = split_of(old_splits), split_of(new_splits)
        for task_id in sorted(before.keys() & after.keys()):
            if task_id in was and task_id in now and was[task_id] != now[task_id]:
                moved[task_id] = (was[task_id], now[task_id])
    return TaskDiff(
        added=tuple(sorted(after.keys() - before.keys())),
        removed=tuple(sorted(before.keys() - after.keys())),
        changed=changed,
        moved=moved,
    )


def _ids(ids: Iterable[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids)


def render_markdown(diff: TaskDiff, old_label: str, new_label: str) -> str:
    """The diff as Markdown: one summary line, then one bullet per kind of change.

    >>> print(render_markdown(TaskDiff(added=("c",), changed={"a": ("gold_sql", "tier")}),
    ...                       "v0.1.0", "v0.2.0"))
    Changes from v0.1.0 to v0.2.0: 1 added, 0 removed, 1 changed.
    <BLANKLINE>
    - Added: `c`
    - Changed:
      - `a`: gold_sql, tier
    >>> print(render_markdown(TaskDiff(), "a.jsonl", "b.jsonl"))
    No task changed from a.jsonl to b.jsonl.
    """
    if diff.is_empty:
        return f"No task changed from {old_label} to {new_label}."
    lines = [f"Changes from {old_label} to {new_label}: {diff.summary()}.", ""]
    if diff.added:
        lines.append(f"- Added: {_ids(diff.added)}")
    if diff.removed:
        lines.append(f"- Removed: {_ids(diff.removed)}")
    if diff.changed:
        lines.append("- Changed:")
        lines.extend(f"  - `{i}`: {', '.join(f)}" for i, f in diff.changed.items())
    if diff.moved:
        lines.append("- Moved between splits:")
        lines.extend(f"  - `{i}`: {a} → {b}" for i, (a, b) in diff.moved.items())
    return "\n".join(lines)
