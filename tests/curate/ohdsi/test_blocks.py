"""curate.ohdsi.blocks: SqlRender's blocks found by where groups start, as a scan finds them."""

from __future__ import annotations

import random

import pytest

from curate.ohdsi import blocks


def scanned_blocks(sql: str, groups: list) -> list[tuple]:
    """SqlRender's reading, spelled out: for each condition (in closing order), every later
    group whose text before it trims to ``?`` is a then part, and the last later group
    whose text before it trims to ``:`` is its else part."""

    def between(left, right):
        if right.start <= left.end:
            return None
        return sql[left.end : right.start].strip("".join(map(chr, range(33))))

    found = []
    for i, condition in enumerate(groups):
        for j in range(i + 1, len(groups)):
            then = groups[j]
            if between(condition, then) != "?":
                continue
            otherwise = None
            for k in range(j + 1, len(groups)):
                if between(then, groups[k]) == ":":
                    otherwise = groups[k]
            found.append((condition, then, otherwise))
    return found


def spans(found) -> list[tuple]:
    return [
        tuple(None if g is None else (g.start, g.end) for g in block)
        for block in (
            (b.condition, b.then, b.otherwise) if isinstance(b, blocks._Block) else b for b in found
        )
    ]


@pytest.mark.parametrize("seed", range(40))
def test_blocks_are_those_a_scan_of_every_pair_finds(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["{", "}", "?", ":", " ", "\t", "\n", "a", "{1}", "{x}?{y}", "{x} ? {y} : {z}"]
    for _ in range(50):
        sql = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        groups = blocks._groups(sql)
        assert spans(blocks._blocks(sql, groups)) == spans(scanned_blocks(sql, groups)), sql


def test_many_blocks_each_resolved_by_its_own_condition() -> None:
    conditions = ("true", "false")
    sql = " UNION ALL ".join(
        f"SELECT {{{conditions[i % 2]}}} ? {{{i}}} : {{-{i}}}" for i in range(800)
    )
    resolved = blocks.resolve(sql).split(" UNION ALL ")
    assert resolved == [f"SELECT {i if i % 2 == 0 else -i}" for i in range(800)]
