"""Stage import: source files of several formats in, source records and problems out.

- :mod:`curate.sources.records`: the record (``sqlgold.source/1``), its checks, JSONL I/O;
- :mod:`curate.sources.load`: a file or folder in one format loaded, or one record found;
- one importer module per format: ``jsonl``, ``querylibrary``, ``funsql``, ``text2omop``.

This package's own namespace imports nothing, so option lists can name the formats and
dialects without loading an importer.
"""

#: The source formats, one importer module each.
FORMAT_NAMES: tuple[str, ...] = ("funsql", "jsonl", "querylibrary", "text2omop")

#: The dialects source SQL may be written in, and the sqlglot dialect that reads each.
READ_DIALECT: dict[str, str] = {
    "ohdsi": "tsql",
    "tsql": "tsql",
    "duckdb": "duckdb",
    "postgres": "postgres",
    "oracle": "oracle",
}

#: A dialect decided at curation (:func:`curate.sources.dialect.candidates`).
AUTO_DIALECT = "auto"
