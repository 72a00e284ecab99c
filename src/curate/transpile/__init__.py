"""Stage transpile: gold SQL in SQL Server (or PostgreSQL) dialect to DuckDB.

:mod:`curate.transpile.to_duckdb` runs sqlglot and the fix-up rules of
:mod:`curate.transpile.rules`, each a small AST transform.
"""
