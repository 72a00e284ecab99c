"""The build's last cover (:mod:`score.suite.redundant`): a variant whose kills others make
too is dropped and the rest renamed in order, with everything that names them; a
variant that is the only one to kill something, or to give a gold rows, stays."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from score.execution.settings import ExecutorSettings
from score.suite import redundant
from score.suite.distill import Distillation
from score.suite.suite_file import DATA, Variant


def _variants(staging: Path, names: list[str]) -> list[Variant]:
    out = []
    for name in names:
        (staging / DATA / name).mkdir(parents=True)
        (staging / DATA / name / "person.parquet").write_bytes(name.encode())
        out.append(Variant(name, staging / DATA / name, "0" * 64, "f" * 64))
    return out


def test_a_variant_whose_kills_another_makes_is_dropped_and_the_rest_renamed(
    tmp_path, monkeypatch
) -> None:
    staging = tmp_path / "suite"
    variants = _variants(staging, ["v01", "v02", "v03", "v04"])
    killed_by = {("a", i): "v01" for i in range(30)}
    killed_by |= {("b", 0): "v02", ("c", 0): "v03", ("d", 0): "v04"}
    distillation = Distillation(set(), 10)
    distillation.killed_by = dict(killed_by)
    distillation.kept = ["v01", "v02", "v03", "v04"]
    # v02's one kill is v04's too; v03 alone kills c, and alone gives task e rows
    kills = {
        "v01": {("a", i) for i in range(30)},
        "v02": {("b", 0)},
        "v03": {("c", 0)},
        "v04": {("b", 0), ("d", 0)},
    }
    monkeypatch.setattr(
        redundant, "_kills", lambda variant, keys, *_: kills[variant.name] & set(keys)
    )
    found = {
        "a": SimpleNamespace(rows_on_variants=[1, 1, 0, 1]),
        "e": SimpleNamespace(rows_on_variants=[0, 0, 2, 0]),
    }
    drops = {"x": "its gold and reference answer differ on variant v04: 1 row against 2"}
    differ_on = {"x": ["v04"]}
    kept = redundant.drop_redundant(
        variants,
        found,
        [],
        distillation,
        drops,
        differ_on,
        staging,
        tmp_path / "cache",
        ExecutorSettings(),
        jobs=1,
        profile="sqlgold",
    )
    assert [v.name for v in kept] == ["v01", "v02", "v03"]  # the old v01, v03 and v04
    assert (staging / DATA / "v03" / "person.parquet").read_bytes() == b"v04"
    assert not (staging / DATA / "v04").exists()
    assert distillation.kept == ["v01", "v02", "v03"]
    assert distillation.killed_by[("b", 0)] == "v03"  # now the old v04's
    assert distillation.killed_by[("c", 0)] == "v02"
    assert differ_on == {"x": ["v03"]} and "variant v03:" in drops["x"]
    assert found["e"].rows_on_variants == [0, 2, 0]


def test_only_the_weakest_variants_kills_are_run() -> None:
    by = {("a", i): "v01" for i in range(95)} | {("b", i): "v02" for i in range(5)}
    assert redundant._weakest_kills(by) == [("b", i) for i in range(5)]
    by |= {("c", i): "v03" for i in range(6)}  # v02 and v03 hold 11 of 106: only v02
    assert redundant._weakest_kills(by) == [("b", i) for i in range(5)]
