"""Where the tests find the repository and ../shared, wherever a test module sits."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
#: The project's own source records (SQL Server golds, DuckDB reference answers).
PROJECT_SOURCE = REPO / "data" / "benchmark" / "omop_source.jsonl"
