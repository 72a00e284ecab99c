"""A test suite folder tampered with, given to ``score run --suite`` and ``verify
--suite`` as a user would (issue 57, finding 17 and the suite attacks): each is refused
with one line naming the file, before any data file is opened; a FIFO never blocks."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from score.suite.suite_file import MANIFEST
from tests.cli_run import one_line_error, sqlgold
from tests.score.suite.test_suite_scoring import tasks_of, write_predictions

VARIANT = "data/v1-even"
PERSON = f"{VARIANT}/person.parquet"


def _fifo(path):
    path.unlink()
    os.mkfifo(path)


def _swap(folder, a, b):
    pa, pb = folder / a, folder / b
    tmp = pa.with_suffix(".swap")
    pa.rename(tmp)
    pb.rename(pa)
    tmp.rename(pb)


def _manifest(folder, change):
    body = json.loads((folder / MANIFEST).read_text())
    change(body)
    (folder / MANIFEST).write_text(json.dumps(body, indent=2, sort_keys=True))


def _first_variant(body, key, value):
    body["variants"][0][key] = value


#: attack -> (how the copy is tampered with, the file the refusal names, words in it)
ATTACKS = {
    "fifo_in_a_variant": (
        lambda f: _fifo(f / PERSON),
        f"{VARIANT}/person.parquet", "a FIFO"),
    "fifo_in_the_vocabulary": (
        lambda f: _fifo(f / "data/vocabulary/concept.parquet"),
        "data/vocabulary/concept.parquet", "a FIFO"),
    "fifo_manifest": (
        lambda f: _fifo(f / MANIFEST), MANIFEST, "a FIFO"),
    "changed": (
        lambda f: (f / VARIANT / "person.parquet").write_bytes(
            (f / VARIANT / "person.parquet").read_bytes()[:-9] + b"tampered!"),
        f"{VARIANT}/person.parquet", "does not match its sha256"),
    "truncated": (
        lambda f: os.truncate(f / "data/vocabulary/concept.parquet", 100),
        "data/vocabulary/concept.parquet", "does not match its sha256"),
    "swapped": (
        lambda f: _swap(f, f"{VARIANT}/person.parquet", "data/v2-thirds/person.parquet"),
        f"{VARIANT}/person.parquet", "does not match its sha256"),
    "missing": (
        lambda f: (f / VARIANT / "death.parquet").unlink(),
        f"{VARIANT}/death.parquet", "missing"),
    "added": (
        lambda f: shutil.copy(f / VARIANT / "death.parquet", f / VARIANT / "note.parquet"),
        f"{VARIANT}/note.parquet", "not listed in suite.json"),
    "symlinked_variant": (
        lambda f: (shutil.move(f / VARIANT, f.parent / "elsewhere"),
                   (f / VARIANT).symlink_to(f.parent / "elsewhere")),
        VARIANT, "a symlink"),
    "symlinked_file": (
        lambda f: ((f / VARIANT / "person.parquet").rename(f.parent / "p.parquet"),
                   (f / VARIANT / "person.parquet").symlink_to(f.parent / "p.parquet")),
        f"{VARIANT}/person.parquet", "a symlink"),
    "name_leaving_the_folder": (
        lambda f: _manifest(f, lambda b: _first_variant(b, "name", "../../etc")),
        MANIFEST, "is not a folder name"),
    "sha256_leaving_the_cache": (
        lambda f: _manifest(f, lambda b: _first_variant(b, "sha256", "../../../tmp/x")),
        MANIFEST, "its sha256 is not a sha256"),
    "file_hash_lies": (
        lambda f: _manifest(f, lambda b: b["files"].update({PERSON: "0" * 64})),
        f"{VARIANT}/person.parquet", "does not match its sha256"),
    "not_json": (lambda f: (f / MANIFEST).write_text("{"), MANIFEST, "cannot read the manifest"),
    "earlier_format": (
        lambda f: _manifest(f, lambda b: b.update(format="sqlgold.test-suite/1")),
        MANIFEST, "an earlier format"),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_tampered_suite_is_refused_naming_the_file(omop_db, made_suite, tmp_path, attack):
    tamper, named, words = ATTACKS[attack]
    folder = tmp_path / "suite"
    shutil.copytree(made_suite.folder, folder, symlinks=True)
    tamper(folder)
    done = sqlgold("verify", "--db", omop_db, "--gold", "SELECT count(*) AS n FROM person",
                   "--answer", "SELECT 1130 AS n", "--suite", folder, timeout=60)  # fmt: skip
    line = one_line_error(done, f"[suite] {folder / named}: ", words)
    assert "Traceback" not in line


@pytest.mark.parametrize("attack", ["fifo_in_a_variant", "fifo_in_the_vocabulary"])
def test_score_run_refuses_a_fifo_in_a_suite_at_once(omop_db, made_suite, tmp_path, attack):
    """Finding 17: a Parquet file of a suite replaced by a FIFO hung `score run` until
    killed, and a refusal named the variant folder, never the file."""
    tamper, named, _ = ATTACKS[attack]
    folder = tmp_path / "suite"
    shutil.copytree(made_suite.folder, folder)
    tamper(folder)
    preds = write_predictions(tmp_path / "p.jsonl")
    done = sqlgold("score", "run", tasks_of(made_suite), preds, "--db", omop_db, "--split", "all",
                   "--out", tmp_path / "run", "--suite", folder, "-q", cwd=tmp_path,
                   timeout=120)  # fmt: skip
    one_line_error(done, f"[suite] {folder / named}: a FIFO")
    assert not (tmp_path / "run").exists()


def test_a_manifest_that_lies_about_a_fingerprint_is_refused(omop_db, made_suite, tmp_path):
    """The data match their hashes, the manifest's fingerprint of a variant does not:
    the variant's database, once made, is not the one the manifest names."""
    folder = tmp_path / "suite"
    shutil.copytree(made_suite.folder, folder)
    _manifest(folder, lambda b: _first_variant(b, "fingerprint", "ab" * 32))
    preds = write_predictions(tmp_path / "p.jsonl")
    done = sqlgold("score", "run", tasks_of(made_suite), preds, "--db", omop_db, "--split", "all",
                   "--out", tmp_path / "run", "--suite", folder, "-q", cwd=tmp_path,
                   timeout=300)  # fmt: skip
    one_line_error(done, f"[suite] {folder / MANIFEST}: variant v1-even: its database's "
                   "fingerprint")  # fmt: skip
