"""What curation decided for one source record: kept (with its tier and result print) or
dropped (with the stage, rule and reason)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curate.verify.gold import Drop
from curate.verify.identical_results import ResultPrint


@dataclass(frozen=True)
class Verdict:
    """What curation decided for one source record."""

    id: str
    status: str  # "kept" or "dropped"
    stage: str | None = None
    rule: str | None = None
    reason: str | None = None
    tier: str | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # transpile warnings nothing settled (kept tasks only)
    result: ResultPrint | None = None  # the kept gold's result hash, size and first row
    smells: tuple[dict[str, str], ...] = ()  # gold smells that warn (rule, reason)
    advisories: tuple[dict[str, str], ...] = ()  # OMOP conventions the gold may break
    #: the concept ids the gold filters standard concept columns by (id, column): looked
    #: up once for the whole run (rule non_standard_concept); not written
    concepts: tuple[tuple[int, str], ...] = ()
    #: a dropped record's gold as DuckDB SQL, when it was read that far, and (a reference
    #: answer that differs) both results' first rows and the rows that differ: what a
    #: curator needs to fix the record, on the report's page
    gold_sql: str | None = None
    preview: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        if self.status == "dropped":
            out.update(stage=self.stage, rule=self.rule, reason=self.reason)
            if self.gold_sql is not None:
                out["gold_sql"] = self.gold_sql
            if self.preview:
                out["preview"] = self.preview
        else:
            out["tier"] = self.tier
            if self.result is not None:
                out["result_sha256"] = self.result.sha256
        if self.notes:
            out["notes"] = list(self.notes)
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.smells:
            out["smells"] = [dict(s) for s in self.smells]
        if self.advisories:
            out["advisories"] = [dict(a) for a in self.advisories]
        return out


def dropped(
    record_id: str, drop: Drop, notes: list[str], gold_sql: str | None = None
) -> tuple[None, Verdict]:
    """No task, and the verdict that drops ``record_id`` for ``drop`` (``gold_sql``: its
    gold as DuckDB SQL, when it was read)."""
    return None, Verdict(
        record_id,
        "dropped",
        drop.stage,
        drop.rule,
        drop.reason,
        notes=tuple(notes),
        gold_sql=gold_sql,
        preview=drop.preview,
    )
