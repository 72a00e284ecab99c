"""A test suite on disk: its manifest (``suite.json``), its variants' data, and each
variant made a DuckDB database to run on.

A suite folder holds::

    suite.json                 the manifest: format, settings, the task set and base
                               database it was built for, each variant's sha256 and
                               fingerprint, the tasks it drops (gold and reference differ)
                               and the variants on which each differs
    report.json, report.md     what the build found, task by task (the manifest also
                               holds each data file's sha256, ``files``)
    data/vocabulary/*.parquet  the vocabulary tables every variant shares: the base
                               database's rows and the suite's local concepts
    data/<variant>/*.parquet   the clinical tables of one variant, and a vocabulary
                               variant's own vocabulary tables (which it reads instead
                               of the shared ones: :mod:`score.suite.vocabulary_variants`)

Parquet, not DuckDB files, is what ships: the same rows give the same bytes, so the same
tasks, base database and seed give a byte-identical suite (DuckDB writes a different
file for the same data each time).  The DuckDB database a variant runs on is made from
its Parquet files on first use and kept in a cache keyed by the variant's sha256
(:func:`variant_database`); its fingerprint is checked against the manifest when it is
opened, so a changed file is refused, not scored on.

A suite folder is read as what it may be: someone else's.  Before any data file is
opened, each is checked to be a regular file (a FIFO would block the read forever, a
symlink would read from elsewhere: both are refused, named), each listed in the
manifest's ``files`` and matching its sha256 there (a changed, truncated, swapped, missing
or added file is named); a variant name or a sha256 the manifest gives is checked to be
one, so no path built from them leaves the suite folder or the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from score.cdm.schema import CDM_TABLES, create_table_sql
from score.defaults import DEFAULT_SUITE_CACHE  # the variants' databases, by sha256
from score.errors import SqlgoldError
from score.files import file_sha256, replacing

#: 2: the variants' ``*_id`` columns are BIGINT (a gold may name a 64-bit person)
SUITE_FORMAT = "sqlgold.test-suite/2"
#: formats an earlier sqlgold wrote: refused with a word on what to do
EARLIER_FORMATS = ("sqlgold.test-suite/1",)
MANIFEST = "suite.json"
DATA = "data"
VOCABULARY = "vocabulary"

#: The tables the variants share: the base database's rows, with the suite's local
#: concepts (:mod:`score.suite.local_concepts`) added; a vocabulary variant holds its own.
VOCABULARY_TABLES = (
    "concept",
    "concept_ancestor",
    "concept_class",
    "concept_relationship",
    "concept_synonym",
    "domain",
    "drug_strength",
    "relationship",
    "vocabulary",
)

#: What a variant may be called (a folder name inside the suite), and a sha256.
_VARIANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class SuiteError(SqlgoldError):
    """A suite folder that cannot be read, or that was built for something else."""

    stage = "suite"


@dataclass(frozen=True)
class Variant:
    """One database of the suite: its name, its data folder, the sha256 of its data
    (vocabulary included) and the fingerprint of the database made from it."""

    name: str
    folder: Path
    sha256: str
    fingerprint: str
    rows: Mapping[str, int] = field(default_factory=dict)

    @property
    def own_vocabulary(self) -> bool:
        """Whether it reads vocabulary tables of its own, not the shared ones."""
        return has_own_vocabulary(self.folder.parent.parent, self.name)


@dataclass(frozen=True)
class Suite:
    """A suite as read from its folder (see the module docstring)."""

    folder: Path
    task_set_sha256: str
    base_fingerprint: str
    seed: int
    settings: Mapping[str, Any]
    variants: tuple[Variant, ...]
    #: task id -> why the suite drops it (its gold and reference answer disagree on a
    #: variant, or its gold fails on one)
    drops: Mapping[str, str] = field(default_factory=dict)
    #: task id of a drop -> the variants on which its gold and reference answer differ:
    #: scoring judges its answers on the others (where both agree, as on the base
    #: database).  A drop not listed here (a suite built before) is judged on the base
    #: database alone.
    differ_on: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def judges(self, task_id: str, variant: str) -> bool:
        """Whether ``variant`` judges the answers of task ``task_id``."""
        if task_id not in self.drops:
            return True
        return task_id in self.differ_on and variant not in self.differ_on[task_id]

    @property
    def vocabulary(self) -> Path:
        return self.folder / DATA / VOCABULARY


def data_sha256(files: Iterable[Path]) -> str:
    """One sha256 over several files: each file's name and sha256, in name order."""
    h = hashlib.sha256()
    for path in sorted(files, key=lambda p: (p.parent.name, p.name)):
        h.update(f"{path.parent.name}/{path.name} {file_sha256(path)}\n".encode())
    return h.hexdigest()


def variant_files(suite_folder: Path, name: str) -> list[Path]:
    """The Parquet files a variant is made of: its own, then the shared vocabulary's
    tables it holds no copy of (a vocabulary variant holds its own,
    :mod:`score.suite.vocabulary_variants`)."""
    own = sorted((suite_folder / DATA / name).glob("*.parquet"))
    mine = {p.name for p in own}
    shared = sorted((suite_folder / DATA / VOCABULARY).glob("*.parquet"))
    return own + [p for p in shared if p.name not in mine]


def has_own_vocabulary(suite_folder: Path, name: str) -> bool:
    """Whether variant ``name`` holds vocabulary tables of its own."""
    folder = suite_folder / DATA / name
    return any((folder / f"{t}.parquet").is_file() for t in VOCABULARY_TABLES)


def manifest_text(
    *,
    task_set_sha256: str,
    base_fingerprint: str,
    seed: int,
    settings: Mapping[str, Any],
    variants: Sequence[Variant],
    drops: Mapping[str, str],
    differ_on: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The bytes of ``suite.json`` (sorted keys, no timestamps: deterministic); each
    variant's data files and the shared vocabulary's are hashed as they are now
    (``files``: path in the suite folder -> sha256)."""
    files = {}
    for v in variants:
        for p in variant_files(v.folder.parent.parent, v.name):
            files[f"{DATA}/{p.parent.name}/{p.name}"] = file_sha256(p)
    body = {
        "format": SUITE_FORMAT,
        "task_set_sha256": task_set_sha256,
        "base_database_fingerprint": base_fingerprint,
        "seed": seed,
        "settings": dict(settings),
        "variants": [
            {
                "name": v.name,
                "sha256": v.sha256,
                "fingerprint": v.fingerprint,
                "rows": dict(sorted(v.rows.items())),
            }
            for v in variants
        ],
        "drops": dict(sorted(drops.items())),
        "differ_on": {t: list(v) for t, v in sorted((differ_on or {}).items())},
        "files": dict(sorted(files.items())),
    }
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _field(body: Mapping[str, Any], key: str, kind: type, path: Path) -> Any:
    value = body.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise SuiteError(f"'{key}' is missing or not a {kind.__name__}", path=str(path))
    return value


def read_suite(folder: str | Path, *, check_data: bool = True) -> Suite:
    """The suite in ``folder``; each variant's data is checked against its sha256 unless
    ``check_data`` is false.  Raises SuiteError naming the file on any fault."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise SuiteError(
            "no suite folder here (build one with `sqlgold suite build`)", path=str(folder)
        )
    if not os.path.lexists(path):
        raise SuiteError(f"no {MANIFEST} in the suite folder", path=str(folder))
    _regular(path)
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SuiteError(f"cannot read the manifest: {e}", path=str(path)) from e
    if isinstance(body, dict) and body.get("format") in EARLIER_FORMATS:
        raise SuiteError(
            f"a suite of an earlier format ({body['format']!r}; this sqlgold reads "
            f"{SUITE_FORMAT!r}): build it again with `sqlgold suite build`",
            path=str(path),
        )
    if not isinstance(body, dict) or body.get("format") != SUITE_FORMAT:
        raise SuiteError(f"not a suite manifest (format {SUITE_FORMAT!r} expected)", path=str(path))
    variants = []
    for i, item in enumerate(_field(body, "variants", list, path)):
        if not isinstance(item, dict):
            raise SuiteError(f"variant {i + 1} is not an object", path=str(path))
        name = _field(item, "name", str, path)
        if not _VARIANT_NAME.fullmatch(name) or name == VOCABULARY:
            raise SuiteError(f"variant name {name!r} is not a folder name", path=str(path))
        if any(v.name == name for v in variants):
            raise SuiteError(f"variant {name} is listed twice", path=str(path))
        variant = Variant(
            name,
            folder / DATA / name,
            _field(item, "sha256", str, path),
            _field(item, "fingerprint", str, path),
            dict(item.get("rows") or {}),
        )
        for key in ("sha256", "fingerprint"):
            if not _SHA256.fullmatch(getattr(variant, key)):
                raise SuiteError(f"variant {name}: its {key} is not a sha256", path=str(path))
        variants.append(variant)
    if check_data:
        _check_data(folder, variants, body.get("files"), path)
    drops = body.get("drops") or {}
    if not isinstance(drops, dict):
        raise SuiteError("'drops' is not an object", path=str(path))
    differ_on = _differ_on(body.get("differ_on", {}), drops, {v.name for v in variants}, path)
    return Suite(
        folder=folder,
        task_set_sha256=_field(body, "task_set_sha256", str, path),
        base_fingerprint=_field(body, "base_database_fingerprint", str, path),
        seed=_field(body, "seed", int, path),
        settings=dict(body.get("settings") or {}),
        variants=tuple(variants),
        drops={str(k): str(v) for k, v in drops.items()},
        differ_on=differ_on,
    )


def _regular(path: Path) -> None:
    """Refuse what is not a regular file in the suite (a symlink, a FIFO, a folder)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as e:
        raise SuiteError(f"cannot read: {e.strerror or e}", path=str(path)) from None
    if not stat.S_ISREG(mode):
        kind = "a symlink" if stat.S_ISLNK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else (
            "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        )  # fmt: skip
        raise SuiteError(
            f"{kind}, where the suite holds a file (a suite sqlgold built holds no other)",
            path=str(path),
        )


def _data_folder(path: Path) -> None:
    """Refuse a data folder that is missing, or not a folder of the suite's own."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        raise SuiteError("no data folder", path=str(path)) from None
    if not stat.S_ISDIR(mode):
        kind = "a symlink" if stat.S_ISLNK(mode) else "not a folder"
        raise SuiteError(
            f"{kind}, where the suite holds a data folder (a suite sqlgold built holds no symlink)",
            path=str(path),
        )


def _check_data(folder: Path, variants: Sequence[Variant], files: Any, manifest: Path) -> None:
    """Each variant's data and the shared vocabulary: regular files of their own, each
    matching the sha256 the manifest lists for it (a suite without ``files``, built
    before they were listed: each variant's data as a whole), named when one does not."""
    _data_folder(folder / DATA)
    _data_folder(folder / DATA / VOCABULARY)
    found: dict[str, Path] = {}
    for name in [VOCABULARY, *(v.name for v in variants)]:
        if name != VOCABULARY:
            _data_folder(folder / DATA / name)
        for p in sorted((folder / DATA / name).glob("*.parquet")):
            _regular(p)
            found[f"{DATA}/{name}/{p.name}"] = p
    if files is not None:
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise SuiteError("'files' is not an object of sha256s", path=str(manifest))
        added = sorted(found.keys() - files.keys())
        if added:
            raise SuiteError(
                f"not listed in {MANIFEST}: added after the build", path=str(found[added[0]])
            )
        for rel, sha in sorted(files.items()):
            if rel not in found:
                raise SuiteError(f"missing: {MANIFEST} lists it", path=str(folder / rel))
            if file_sha256(found[rel]) != sha:
                raise SuiteError(
                    f"does not match its sha256 in {MANIFEST} (changed after the build; build "
                    "the suite again)",
                    path=str(found[rel]),
                )
    for v in variants:
        own = [p for rel, p in found.items() if rel.startswith(f"{DATA}/{v.name}/")]
        if not own:
            raise SuiteError(f"variant {v.name}: no data files", path=str(v.folder))
        if data_sha256(variant_files(folder, v.name)) != v.sha256:
            raise SuiteError(
                f"variant {v.name}: its data does not match the sha256 in {MANIFEST} "
                "(a file was changed; build the suite again)",
                path=str(v.folder),
            )


def _differ_on(
    body: Any, drops: Mapping[str, Any], names: set[str], path: Path
) -> dict[str, tuple[str, ...]]:
    """The manifest's ``differ_on``, each task one it drops, each variant one it holds."""
    if not isinstance(body, dict):
        raise SuiteError("'differ_on' is not an object", path=str(path))
    out = {}
    for tid, listed in body.items():
        if tid not in drops:
            raise SuiteError(
                f"'differ_on' names task {tid}, which it does not drop", path=str(path)
            )
        if not isinstance(listed, list) or not set(listed) <= names or not listed:
            raise SuiteError(
                f"'differ_on' of task {tid} is not a list of the suite's variants", path=str(path)
            )
        out[str(tid)] = tuple(str(v) for v in listed)
    return out


def check_suite_for(suite: Suite, *, task_set_sha256: str, base_fingerprint: str | None) -> None:
    """Refuse a suite built for other tasks or on another base database."""
    where = str(suite.folder / MANIFEST)
    if suite.task_set_sha256 != task_set_sha256:
        raise SuiteError(
            "the suite was built for another task set (set sha256 "
            f"{suite.task_set_sha256[:12]}..., these tasks {task_set_sha256[:12]}...): "
            "build it for these tasks",
            path=where,
        )
    if base_fingerprint is not None and suite.base_fingerprint != base_fingerprint:
        raise SuiteError(
            f"the suite was built on another base database (fingerprint "
            f"{suite.base_fingerprint[:12]}..., this database {base_fingerprint[:12]}...)",
            path=where,
        )


def write_duckdb(target: Path, files: Sequence[Path]) -> None:
    """A DuckDB database at ``target`` with every CDM table (CDM types) in schema
    ``cdm``, filled from the Parquet files named ``<table>.parquet``; written whole or
    not at all."""
    import duckdb

    by_table = {p.stem: p for p in files}
    unknown = sorted(set(by_table) - set(CDM_TABLES))
    if unknown:
        raise SuiteError(f"not CDM tables: {', '.join(unknown)}", path=str(files[0].parent))
    with replacing(target) as tmp:
        con = duckdb.connect(str(tmp))
        try:
            con.execute("SET threads = 1")
            con.execute("CREATE SCHEMA cdm")
            for table in sorted(CDM_TABLES):
                con.execute(create_table_sql(table, "cdm", bigint_ids=True))
                if table in by_table:
                    con.execute(
                        f'INSERT INTO cdm."{table}" BY NAME SELECT * FROM read_parquet(?)',
                        [str(by_table[table])],
                    )
            con.execute("CHECKPOINT")
        finally:
            con.close()


def variant_database(suite: Suite, variant: Variant, cache: str | Path | None = None) -> Path:
    """The DuckDB database of ``variant``, made from its data on first use and kept in
    ``cache`` (default the user cache folder's ``suites``) under its sha256."""
    root = Path(cache) if cache is not None else DEFAULT_SUITE_CACHE
    target = root / f"{variant.sha256}.duckdb"
    if not target.is_file():
        write_duckdb(target, variant_files(suite.folder, variant.name))
    return target


def write_tables(folder: Path, tables: Mapping[str, Any]) -> list[Path]:
    """Write each ``pyarrow.Table`` of ``tables`` (name -> table) as
    ``folder/<name>.parquet``, with settings that give the same bytes for the same rows."""
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(tables):
        path = folder / f"{name}.parquet"
        with replacing(path) as tmp:
            pq.write_table(
                tables[name], tmp, compression="zstd", write_statistics=False, store_schema=False
            )
        written.append(path)
    return written


def replace_folder(new: Path, target: Path) -> None:
    """Put the folder ``new`` in place of ``target`` (a suite folder, an empty one, or
    none): the old one is renamed aside first and removed after."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        if not (target / MANIFEST).is_file() and any(target.iterdir()):
            raise SuiteError(
                "is not empty and holds no suite: refusing to replace it", path=str(target)
            )
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)
