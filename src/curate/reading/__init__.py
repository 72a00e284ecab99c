"""Stages ohdsi and transpile of a record: its gold read as DuckDB SQL, ahead of its
checks, from its template when it only renames holes."""
