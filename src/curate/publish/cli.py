"""The ``sqlgold publish`` and ``sqlgold diff`` commands: parse options, call the library.

Registered on the main group in :mod:`curate.cli` with
``main.add_command(publish_command)`` and ``main.add_command(diff_command)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from curate.cli.options import split_options
from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import duckdb_database_options, handle_errors, suite_option
from score.errors import SqlgoldError

DEFAULT_RELEASES = Path("releases")  # in the current folder


def _semantic_version(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """--version is checked like every other option value: a bad one is a usage error."""
    from curate.publish.versions import version_key
    from score.errors import SqlgoldError

    try:
        version_key(value)
    except SqlgoldError as e:
        raise click.BadParameter(e.message) from None
    return value


@click.command("publish", context_settings=HELP)
@click.argument("tasks", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@option(
    "--version",
    "Semantic version of the release (tagged vX.Y.Z on the Hub).",
    callback=_semantic_version,
)
@option(
    "--report",
    "Curation report JSON (default: <name>_report.json beside TASKS).",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)
@duckdb_database_options(
    "the release's database config describes the DuckDB file of the CDM the tasks were "
    "verified on (sqlgold db build, or the file sqlgold db load copied)"
)
@option(
    "--out",
    "Releases folder; the release goes to OUT/<name>/<version>/.",
    default=DEFAULT_RELEASES,
)
@split_options("Share of each tier held out in the test split.")
@option("--license")
@option("--pretty-name", "Card title (default from the report).")
@option("--repo-id", "Hub dataset repo named in the card's loading example (part of the release).")
@option("--homepage", "Homepage named in the card (default: the Hub page of --repo-id).")
@option("--push", "After publishing, upload the folder to this Hub dataset repo and tag it vX.Y.Z.")
@option("--private", "With --push: create the repo private.")
@suite_option(
    "A test suite built for TASKS on this database: released in suite/, hashed in "
    "the manifest, and explained in the card."
)
@handle_errors
def publish_command(
    tasks: Path,
    version: str,
    report: Path | None,
    db_path: Path,
    schema: str | None,
    out: Path,
    test_fraction: float,
    seed: int,
    license_: str,
    pretty_name: str | None,
    repo_id: str | None,
    homepage: str | None,
    push_to: str | None,
    private: bool,
    suite_dir: Path | None,
) -> None:
    """Publish a curated task file as an immutable, Hub-ready release folder.

    Writes Parquet (configs "tasks" with train/test and "database"), a dataset card
    and a manifest of hashes. Republishing identical content is a no-op; a version
    already published with other content is an error.
    """
    from curate.api import publish_release
    from curate.publish.versions import check_card_fields

    check_card_fields(  # the --push value too, before anything is read
        license=license_, pretty_name=pretty_name, repo_id=repo_id, homepage=homepage,
        push_to=push_to,
    )  # fmt: skip
    result = publish_release(
        tasks,
        version,
        out=out,
        db=db_path,
        schema=schema,
        report=report,
        test_fraction=test_fraction,
        seed=seed,
        license=license_,
        pretty_name=pretty_name,
        repo_id=repo_id,
        homepage=homepage,
        suite=suite_dir,
    )
    split = result.manifest["split"]
    sizes = f"{len(split['train'])} train, {len(split['test'])} test"
    if result.created:
        click.echo(f"published {result.name} {version} ({sizes}) to {result.path}")
    else:
        click.echo(f"{result.name} {version} is already published with this content: no change")
    if push_to:
        from curate.publish.hub_push import push_release

        pushed = push_release(result.path, push_to, private=private or None)
        if pushed.created:
            click.echo(f"pushed {pushed.tag} to {pushed.repo_id} (commit {pushed.commit})")
        else:
            click.echo(f"{pushed.repo_id} already has {pushed.tag} with this content: no change")


def load_side(path: Path) -> tuple[list[dict[str, Any]], dict[str, list[str]] | None, str]:
    """Tasks, split (or None) and a label of a task file or a release folder."""
    from score.inputs.task_manifest import read_manifest
    from score.inputs.task_set import load_tasks, read_release

    if path.is_dir():
        manifest = read_manifest(path)
        tasks, splits = read_release(path)
        return tasks, splits, f"{manifest['name']} v{manifest['version']}"
    return load_tasks(path), None, str(path)


@click.command("diff", context_settings=HELP)
@click.argument("old", type=click.Path(exists=True, path_type=Path))
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@option("--json", "Print the diff as JSON.")
@handle_errors
def diff_command(old: Path, new: Path, as_json: bool) -> None:
    """Tasks added, removed and changed (which fields) from OLD to NEW.

    OLD and NEW are task files (JSONL) or release folders; between two releases,
    tasks that moved between train and test are listed too.
    """
    from curate.publish.task_diff import diff_tasks, render_markdown

    try:
        old_tasks, old_splits, old_label = load_side(old)
        new_tasks, new_splits, new_label = load_side(new)
    except SqlgoldError as e:
        e.stage = "diff"
        raise
    diff = diff_tasks(old_tasks, new_tasks, old_splits=old_splits, new_splits=new_splits)
    if as_json:
        click.echo(json.dumps(diff.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(render_markdown(diff, old_label, new_label))
