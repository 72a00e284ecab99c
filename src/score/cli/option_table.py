"""Every option of every sqlgold command, defined once: its flag, type, default and help.

A command names the options it takes (``@option("--jobs", "Records verified in
parallel.")``), giving its own help where the meaning is its own; the type, the range
and the default are the table's, so ``--timeout`` is the same number of seconds, with
the same check, on every command.  ``sqlgold.toml`` settings become the defaults of these
options (:mod:`score.config`).

Only click is imported: every command module imports this one at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from score.comparison.profiles.registry import profile_names

FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)
EXISTING = click.Path(exists=True, path_type=Path)
EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
EXISTING_FOLDER = click.Path(exists=True, file_okay=False, path_type=Path)
AT_LEAST_0, AT_LEAST_1 = click.IntRange(0), click.IntRange(1)
SECONDS = click.FloatRange(min=0, min_open=True)
SPLITS = click.Choice(["test", "train", "all"])


@dataclass(frozen=True)
class Spec:
    """One option: its declarations (flag, and the parameter's name where it differs)
    and click's settings for it."""

    decls: tuple[str, ...]
    help: str
    settings: dict[str, Any] = field(default_factory=dict)


def flag(decl: str, help: str, dest: str | None = None) -> Spec:
    return Spec((decl, dest) if dest else (decl,), help, {"is_flag": True})


def value(decl: str, type: Any, default: Any, help: str, dest: str | None = None, **more) -> Spec:
    show = default is not None and not more.get("required")
    settings = {"type": type, "default": default, "show_default": show, **more}
    return Spec((decl, dest) if dest else (decl,), help, settings)


def text(decl: str, help: str, dest: str | None = None, **more) -> Spec:
    return value(decl, None, more.pop("default", None), help, dest, **more)


OPTIONS: dict[str, Spec] = {
    # what is read and written
    "--out": value("--out", FOLDER, None, "Folder to write."),
    "--out file": value("--out", FILE, None, "File to write."),
    "--report": value("--report", FILE, None, "Report to write."),
    "--tasks": value("--tasks", EXISTING, None, "Task file or release folder.", "tasks_path"),
    "--suite": value(
        "--suite", click.Path(path_type=Path), None, "A test suite's folder.", "suite_dir"
    ),
    "--manifest": value("--manifest", EXISTING, None, "A release's manifest.json (or folder)."),
    "--against": value(
        "--against", EXISTING, None, "A task file verified elsewhere.", metavar="TASKS"
    ),
    "--source": value("--source", EXISTING, None, "Source file or folder."),
    "--cache": value("--cache", FOLDER, None, "Gold result cache folder.", "cache_dir"),
    "--no-cache": flag("--no-cache", "Do not read or write the gold cache."),
    "--resume": flag("--resume", "Continue an interrupted run."),
    "--json": flag("--json", "Print JSON.", "as_json"),
    "--quiet": Spec(
        ("--quiet", "-q"), "No progress bar or progress messages on stderr.", {"is_flag": True}
    ),
    # the database and the limits of every query
    "--schema": text("--schema", "Schema holding the CDM tables.", metavar="NAME"),
    "--today": text("--today", "Fixed current date.", metavar="YYYY-MM-DD"),
    "--timeout": value("--timeout", SECONDS, 30.0, "Wall-clock limit per query, in seconds."),
    "--max-rows": value(
        "--max-rows", AT_LEAST_1, 10_000, "Row cap: a query returning more rows fails."
    ),
    "--memory-limit": text("--memory-limit", "Memory per query.", default="4GB", show_default=True),
    "--threads": value("--threads", AT_LEAST_1, None, "DuckDB threads."),
    "--max-sql-bytes": value("--max-sql-bytes", AT_LEAST_1, 100_000, "Longest SQL text parsed."),
    # how work is shared and compared
    "--jobs": value("--jobs", AT_LEAST_1, 1, "Items handled in parallel."),
    "--profile": value(
        "--profile", click.Choice(profile_names()), "sqlgold", "Comparator profile."
    ),
    "--seed": value("--seed", int, 0, "Seed."),
    "--resamples": value("--resamples", AT_LEAST_1, 2000, "Bootstrap resamples."),
    "--split": value("--split", SPLITS, "test", "Which side of the split."),
    "--split-seed": value("--split-seed", int, 0, "Split seed."),
    "--test-fraction": value("--test-fraction", click.FloatRange(0.0, 1.0), 0.5, "Test share."),
    "--language": value("--language", None, None, "Question language.", "languages", multiple=True),
    "--language one": value("--language", None, "en", "Question language."),
    "--strict": flag("--strict", "Exit with code 3 on any finding."),
    # curation's reference rules and checks
    "--min-rows": value("--min-rows", AT_LEAST_0, 1, "Fewest rows a gold may return."),
    "--max-gold-rows": value("--max-gold-rows", AT_LEAST_1, 1000, "Most rows a gold may return."),
    "--allow-all-zero": flag("--allow-all-zero", "Keep golds whose every value is zero or NULL."),
    "--allow-current-date": flag("--allow-current-date", "Keep golds that read the current date."),
    "--no-determinism-check": flag("--no-determinism-check", "Do not rerun golds that may vary."),
    "--allow-ties": flag("--allow-ties", "Keep golds whose ORDER BY ... LIMIT cuts through ties."),
    "--allow-window-ties": flag("--allow-window-ties", "Keep rankings that depend on ties."),
    "--allow-unordered-limit": flag("--allow-unordered-limit", "Keep LIMIT without ORDER BY."),
    "--allow-unresolved-semantics": flag("--allow-unresolved-semantics", "Keep unsettled golds."),
    "--max-per-result": value("--max-per-result", AT_LEAST_1, None, "Tasks kept per result."),
    "--smell": value("--smell", None, None, "Also check this smell.", "smells_on", multiple=True),
    "--no-smell": value("--no-smell", None, None, "Skip this smell.", "smells_off", multiple=True),
    "--no-advisories": flag("--no-advisories", "No OMOP advisories."),
    # verify
    "--gold": text("--gold", "Gold query (a file or SQL text).", metavar="FILE_OR_SQL"),
    "--answer": text("--answer", "Reference answer (a file or SQL text).", metavar="FILE_OR_SQL"),
    "--gold-dialect": value("--gold-dialect", None, "tsql", "Dialect of --gold."),
    "--answer-dialect": value("--answer-dialect", None, "duckdb", "Dialect of --answer."),
    "--id": text("--id", "A record of --source.", "record_id"),
    "--rows": value("--rows", AT_LEAST_1, 5, "Rows shown per result."),
    "--watch": flag("--watch", "Check again on every save."),
    # scoring
    "--run": text("--run", "Score only the predictions with this run label.", "run_label"),
    "--lenient": flag("--lenient", "Report bad prediction lines instead of stopping."),
    "--dialect": value("--dialect", None, None, "The predictions' SQL dialect."),
    "--efficiency": value("--efficiency", click.Choice(["ves", "rves", "cost"]), None, "Measure."),
    "--efficiency-runs": value("--efficiency-runs", AT_LEAST_1, None, "Timed runs per query."),
    "--brittleness": flag("--brittleness", "B is A without its retrieved cases."),
    # test suites
    "--max-databases": value("--max-databases", AT_LEAST_1, 50, "Most variants the suite keeps."),
    "--max-candidates": value("--max-candidates", AT_LEAST_1, 3000, "Most candidates tried."),
    # databases
    "--vocab": value("--vocab", EXISTING_FOLDER, None, "An Athena vocabulary download."),
    "--recompute": flag("--recompute", "Compute the fingerprint by a full pass."),
    "--reader-password": text("--reader-password", "Password of sqlgold_reader.", metavar="TEXT"),
    "--check": flag("--check", "Write nothing; say what differs."),
    # publishing
    "--version": text(
        "--version", "Semantic version of the release.", required=True, metavar="X.Y.Z"
    ),
    "--license": text(
        "--license", "Card license id.", "license_", default="apache-2.0", show_default=True
    ),
    "--pretty-name": text("--pretty-name", "Card title."),
    "--repo-id": text("--repo-id", "Hub dataset repo.", metavar="ORG/NAME"),
    "--homepage": text("--homepage", "Homepage named in the card.", metavar="URL"),
    "--push": text("--push", "Hub dataset repo to upload to.", "push_to", metavar="REPO_ID"),
    "--private": flag("--private", "Create the Hub repo private."),
    # generation
    "--model": text("--model", "Model name the endpoint serves.", required=True),
    "--base-url": text("--base-url", "OpenAI-compatible endpoint.", required=True),
    "--mode": value("--mode", click.Choice(["zero-shot", "rag"]), "zero-shot", "Prompt mode."),
    "--top-k": value("--top-k", AT_LEAST_1, 5, "Chunks retrieved into a rag prompt."),
    "--grounding": value("--grounding", FOLDER, None, "Grounding documents.", "grounding_dir"),
    "--max-tokens": value("--max-tokens", AT_LEAST_1, 16384, "Output token limit."),
    "--temperature": value("--temperature", click.FloatRange(0.0), 0.0, "Sampling temperature."),
    "--api-key-env": text(
        "--api-key-env", "Variable of the API key.", default="OPENAI_API_KEY", show_default=True
    ),
    "--request-timeout": value("--request-timeout", SECONDS, 600.0, "Seconds per answer."),
    "--retries": value("--retries", AT_LEAST_0, 5, "Retries of a call."),
    "--retry-backoff": value("--retry-backoff", click.FloatRange(min=0), 1.0, "First wait."),
    "--token-limit-param": value(
        "--token-limit-param",
        click.Choice(["max_tokens", "max_completion_tokens"]),
        "max_tokens",
        "Token field.",
    ),
    "--max-consecutive-errors": value(
        "--max-consecutive-errors", AT_LEAST_1, 10, "Failures in a row."
    ),
}


def option(key: str, help: str | None = None, **changes: Any) -> Callable[[Callable], Callable]:
    """The option ``key`` of :data:`OPTIONS` as a click decorator, with ``help`` (the
    command's own words for it) and any of click's settings changed (``required``,
    ``default``, ``dest`` for another parameter name, ``callback``, ...)."""
    spec = OPTIONS[key]
    dest = changes.pop("dest", None)
    decls = (spec.decls[0], dest) if dest else spec.decls
    settings = {**spec.settings, **changes}
    if "default" in changes and "show_default" not in changes:
        settings["show_default"] = changes["default"] is not None
    return click.option(*decls, help=help or spec.help, **settings)
