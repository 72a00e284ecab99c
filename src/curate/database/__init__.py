"""Stage database: build the embedded OMOP CDM DuckDB database (``sqlgold db``)."""
