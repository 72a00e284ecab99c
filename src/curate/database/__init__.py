"""Databases other than the embedded DuckDB file: a local Spark Connect server and the
loader that writes the embedded CDM into it."""
