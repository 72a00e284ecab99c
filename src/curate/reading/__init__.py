"""Stages ohdsi and transpile of a record: its gold read as DuckDB SQL, ahead of its
checks, and from its template's first reading when it only renames the holes."""
