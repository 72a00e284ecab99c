"""SqlRender's ``{condition} ? {then} : {else}`` blocks, resolved as SqlRender resolves them.

SqlRender (OHDSI/SqlRender, ``SqlRender.parseIfThenElse``) works on the text after
parameter substitution:

- every matched pair of braces is a group, wherever it stands (string literals and
  comments included); an unmatched brace is left as text;
- a group followed by ``?`` (only white space around it) and another group is a block;
  a third group after ``:`` is its else part;
- blocks are resolved in the order their conditions close (an outer block before the
  blocks inside its branches): the block is replaced by the inside of the branch its
  condition chooses (:func:`curate.ohdsi.conditions.evaluate`), or by nothing.  Blocks
  in a branch that is dropped are never looked at; a group that starts right where a
  resolved block ended is no longer a condition (SqlRender loses track of it).

>>> resolve("SELECT {1 IN (@a)} ? {x} : {y}, {true}?{{false}?{a}:{b}} FROM t")
'SELECT y, b FROM t'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from curate.ohdsi.conditions import evaluate

_BRACES = re.compile(r"[{}]")


@dataclass
class _Group:
    start: int  # index of '{'
    end: int  # one past '}'
    valid: bool = True


@dataclass(frozen=True)
class _Block:
    condition: _Group
    then: _Group
    otherwise: _Group | None


def _groups(sql: str) -> list[_Group]:
    """Matched braces in the order they close."""
    opened: list[int] = []
    found: list[_Group] = []
    for brace in _BRACES.finditer(sql):
        at = brace.start()
        if sql[at] == "{":
            opened.append(at)
        elif opened:
            found.append(_Group(opened.pop(), at + 1))
    return found


def _blocks(sql: str, groups: list[_Group]) -> list[_Block]:
    """The blocks among ``groups``, in the order their conditions close.

    A condition's then part is the group that starts past ``?`` and the white space
    around it; only one group can start at a given place, so each condition has at most
    one, found by where it starts (and its else part likewise past ``:``), with no
    scan of the other groups.
    """
    starting = {group.start: group for group in groups}
    blocks: list[_Block] = []
    for condition in groups:
        then = starting.get(_past(sql, condition.end, "?"))
        if then is not None:
            blocks.append(_Block(condition, then, starting.get(_past(sql, then.end, ":"))))
    return blocks


def _past(sql: str, at: int, mark: str) -> int:
    """Where the text resumes after white space, ``mark`` and white space from ``at``
    (white space as Java's ``trim`` sees it: every character up to the space); -1 if
    the first character after the white space is not ``mark``.

    >>> _past("{a} ? {b}", 3, "?"), _past("{a} x {b}", 3, "?")
    (6, -1)
    """
    at = _skip_space(sql, at)
    if at >= len(sql) or sql[at] != mark:
        return -1
    return _skip_space(sql, at + 1)


def _skip_space(sql: str, at: int) -> int:
    while at < len(sql) and sql[at] <= " ":
        at += 1
    return at


def _replace(sql: str, groups: list[_Group], start: int, end: int, keep: _Group | None) -> str:
    """``sql[start:end]`` replaced by the inside of ``keep`` (or nothing); groups follow."""
    inner = sql[keep.start + 1 : keep.end - 1] if keep is not None else ""
    kept_from = keep.start + 1 if keep is not None else 0
    kept_to = keep.end - 2 if keep is not None else -1
    shift = start - end + len(inner)
    for group in groups:
        if not group.valid:
            continue
        if group.start > start:
            if kept_from <= group.start < kept_to:
                moved = start - kept_from
                group.start += moved
                group.end += moved
            elif group.start > end:
                group.start += shift
                group.end += shift
            else:
                group.valid = False
        elif group.end > end:
            group.end += shift
    return sql[:start] + inner + sql[end:]


def resolve(sql: str, on_condition: Callable[[str], None] | None = None) -> str:
    """``sql`` with every SqlRender block resolved; :class:`RenderError` on a bad condition.

    ``on_condition`` is shown the text of every condition evaluated.
    """
    groups = _groups(sql)
    for block in _blocks(sql, groups):
        if not block.condition.valid:
            continue
        condition = sql[block.condition.start + 1 : block.condition.end - 1]
        if on_condition is not None:
            on_condition(condition)
        last = block.otherwise or block.then
        keep = block.then if evaluate(condition) else block.otherwise
        sql = _replace(sql, groups, block.condition.start, last.end, keep)
    return sql
