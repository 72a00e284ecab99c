"""Stage database: build the embedded OMOP CDM DuckDB database (``sqlgold db``) and load
it into PostgreSQL (``load.py``) or Spark Connect (``spark_load.py``)."""
