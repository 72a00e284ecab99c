"""Alternative golds: other queries a right answer may match instead of the gold (Spider
2.0 and BIRD accept several answers per task).

Curation reads, transpiles and verifies each as it does the gold (the same reference
rules, the same collation check, the same smells are not asked of it): a record whose
alternative fails is dropped with the rule it broke and a reason that names it
(``alternative gold 2: ...``).  A reference answer must then return the result of the
gold or of one alternative.  The task record carries each verified alternative with
its DuckDB SQL, its SQL as written and its pinned result (task format 1.2), and scoring
takes the best match, saying which matched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from curate.reading.gold import read_gold
from curate.sources.records import SourceRecord
from curate.transpile.to_duckdb import Transpiled
from curate.verify.gold import Drop
from score.comparison.result_hash import result_sha256
from score.execution.guard import check_statement
from score.execution.result import QueryError, QueryResult
from score.inputs.task_file import TASK_FORMAT_WITH_ALTERNATIVES

#: Verifies one gold: its reading and parsed tree in, its result (or the Drop) out.
Verify = Callable[[Transpiled, exp.Expression | None], QueryResult | Drop]


@dataclass(frozen=True)
class VerifiedAlternative:
    """An alternative gold as written (``source_sql``, ``source_dialect``), as read, and
    its result."""

    source_sql: str
    source_dialect: str
    gold: Transpiled
    result: QueryResult


def _tree(sql: str) -> exp.Expression | None:
    try:
        return check_statement(sql)
    except QueryError:
        return None


def verify_alternatives(record: SourceRecord, verify: Verify) -> list[VerifiedAlternative] | Drop:
    """Each alternative gold of ``record`` read and verified, or the Drop of the first
    that fails (its stage and rule, the reason naming which alternative)."""
    out: list[VerifiedAlternative] = []
    for i, alternative in enumerate(record.alternative_golds, start=1):
        dialect = alternative.gold_dialect or record.gold_dialect or "tsql"
        alone = replace(
            record,
            gold_sql=alternative.gold_sql,
            gold_dialect=dialect,
            answer_sql=None,
            answer_dialect=None,
            alternative_golds=(),
        )
        _, _, read = read_gold(alone)
        if isinstance(read, Drop):
            return _named(read, i)
        result = verify(read, _tree(read.sql))
        if isinstance(result, Drop):
            return _named(result, i)
        out.append(VerifiedAlternative(alternative.gold_sql, dialect, read, result))
    return out


def _named(drop: Drop, index: int) -> Drop:
    return Drop(drop.stage, drop.rule, f"alternative gold {index}: {drop.reason}")


def with_alternatives(
    task: dict[str, Any], alternatives: list[VerifiedAlternative], *, order_matters: bool
) -> dict[str, Any]:
    """``task`` carrying its verified alternatives (format 1.2); unchanged without any."""
    if not alternatives:
        return task
    task["schema_version"] = TASK_FORMAT_WITH_ALTERNATIVES
    task["alternative_golds"] = [
        {
            "gold_sql": a.gold.sql,
            "source_sql": a.source_sql,
            "source_dialect": a.source_dialect,
            "transpile_rules": list(a.gold.rules),
            "gold_result": {
                "sha256": result_sha256(a.result, ordered=order_matters),
                "rows": a.result.num_rows,
                "columns": list(a.result.columns),
                "types": list(a.result.types),
            },
        }
        for a in alternatives
    ]
    return task
