"""``sqlgold generate`` and ``sqlgold prompt``: run a model on the benchmark, or print the
prompt one instance gets.

Registered on the main group in :mod:`curate.cli`.  Only click and the shared option
bundles are imported at module level; the generation machinery (and through it duckdb,
openai and bm25s) is imported inside the commands, so ``sqlgold --help`` stays fast.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path

import click

from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import (
    ProgressBar,
    database_options,
    handle_errors,
    jobs_option,
    quiet_option,
    split_options,
)
from score.defaults import DEFAULT_GROUNDING


def _today(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2025-12-31") from None


def prompt_options(f: Callable) -> Callable:
    """What decides a prompt: mode, today, retrieval depth and documents, and the split
    (which tasks' examples retrieval may show)."""
    options = [
        option("--mode", "zero-shot: database and question; rag: also the top-k retrieved chunks."),
        option(
            "--today",
            "The fixed today the prompt states (default: the task's `today`, else none).",
            callback=_today,
        ),
        option("--top-k"),
        option(
            "--grounding",
            "Grounding documents indexed for rag (examples.md aside).",
            default=DEFAULT_GROUNDING,
        ),
        split_options("Share of each tier held out (the split of `sqlgold grounding`)."),
    ]
    for add in reversed(options):
        f = add(f)
    return f


@click.command("prompt", context_settings=HELP)
@click.argument("task_id")
@option("--tasks", "Task file or release folder holding TASK_ID.", required=True)
@option("--language one")
@prompt_options
@database_options
@option("--json", "Print the messages and sha256s as JSON.")
@handle_errors
def prompt_command(
    task_id, tasks_path, language, mode, today, top_k, grounding_dir, test_fraction,
    split_seed, db_path, schema, as_json,
):  # fmt: skip
    """Print the prompt TASK_ID gets: the system and user messages a model is sent."""
    from score.execution.executor import Executor
    from score.generate.errors import GenerationError, require
    from score.generate.generate import PromptSettings, Selection, make_prompter
    from score.generate.prompt import render_text
    from score.inputs.task_set import Instance, load_tasks

    if mode == "rag":
        require("bm25s")
    tasks = load_tasks(tasks_path)
    task = next((t for t in tasks if t["id"] == task_id), None)
    if task is None:
        raise GenerationError("no such task", path=str(tasks_path), task_id=task_id)
    if language not in task["questions"]:
        raise GenerationError(
            f"no {language!r} question (it has {', '.join(sorted(task['questions']))})",
            path=str(tasks_path),
            task_id=task_id,
        )
    settings = PromptSettings(mode=mode, today=today, top_k=top_k, grounding_dir=grounding_dir)
    selection = Selection(test_fraction=test_fraction, seed=split_seed)
    with Executor(db_path, schema, sql_dialect="duckdb") as executor:
        prompter = make_prompter(executor, tasks, selection, settings)
    prompt = prompter.prompt(Instance(task, language))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "task_id": task_id,
                    "language": language,
                    "mode": mode,
                    "messages": list(prompt.messages),
                    "template_id": prompt.template_id,
                    "prompt_template_sha256": prompt.template_sha256,
                    "prompt_schema_sha256": prompt.schema_sha256,
                    "prompt_sha256": prompt.prompt_sha256,
                    "today": prompt.today,
                    "context": list(prompt.context_ids),
                },
                ensure_ascii=False,
                indent=2,
                sort_keys=True,
            )
        )
    else:
        click.echo(render_text(prompt), nl=False)


@click.command("generate", context_settings=HELP)
@click.argument("tasks_path", metavar="TASKS", type=click.Path(exists=True, path_type=Path))
@option("--model", "Model name the endpoint serves (e.g. qwen2.5:7b).")
@option("--base-url", "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama).")
@option(
    "--out file",
    "Predictions file to write; the run goes beside it as <name>.run.json.",
    required=True,
)
@prompt_options
@option("--split", "Which side of the split to ask about.")
@option("--language", "Only these question languages (repeatable; default: every language).")
@jobs_option("Requests in flight at once (threads).")
@option("--max-tokens", "Output token limit, thinking included (seed 004).")
@option("--temperature")
@option("--resume", "Complete an interrupted or partly failed run.")
@option("--api-key-env", "Environment variable holding the API key (local servers need none).")
@option("--request-timeout", "Seconds to wait for one answer before retrying.")
@option("--retries", "Retries of a call after 429, 5xx, a timeout or a malformed answer.")
@option(
    "--retry-backoff",
    "First wait in seconds between retries (doubled each time) when the server sends no "
    "Retry-After.",
)
@option(
    "--token-limit-param",
    "Request field carrying --max-tokens (OpenAI's reasoning models want max_completion_tokens).",
)
@option("--max-consecutive-errors", "Stop the run after this many failed instances in a row.")
@database_options
@quiet_option
@handle_errors
def generate_command(
    tasks_path, model, base_url, out, mode, today, top_k, grounding_dir, test_fraction,
    split_seed, split, languages, jobs, max_tokens, temperature, resume, api_key_env,
    request_timeout, retries, retry_backoff, token_limit_param, max_consecutive_errors,
    db_path, schema, quiet,
):  # fmt: skip
    """Ask a model (any OpenAI-compatible chat endpoint) every selected instance of TASKS
    and write its answers to --out as predictions for `sqlgold score run`.

    Lines are sorted by task and language; the run label is <model>/<mode>.  An
    interrupted run continues with --resume, asking only for what is missing.  Exit
    codes: 0 done (failed calls are recorded as generation_error), 1 error.
    """
    from score.execution.executor import Executor
    from score.generate.client import ChatSettings
    from score.generate.errors import require
    from score.generate.generate import PromptSettings, Selection, run_generation

    require("openai")
    if mode == "rag":
        require("bm25s")
    chat = ChatSettings(
        model=model,
        base_url=base_url,
        api_key=os.environ.get(api_key_env) or "sqlgold-no-key",
        max_tokens=max_tokens,
        temperature=temperature,
        timeout=request_timeout,
        retries=retries,
        backoff=retry_backoff,
        token_limit_param=token_limit_param,
    )
    selection = Selection(split, test_fraction, split_seed, tuple(dict.fromkeys(languages)))
    settings = PromptSettings(mode=mode, today=today, top_k=top_k, grounding_dir=grounding_dir)
    bar = ProgressBar(f"generating ({model}, {mode})", quiet)
    try:
        with Executor(db_path, schema, sql_dialect="duckdb") as executor:
            outcome = run_generation(
                tasks_path,
                out,
                executor,
                chat,
                selection=selection,
                prompt_settings=settings,
                jobs=jobs,
                resume=resume,
                max_consecutive_errors=max_consecutive_errors,
                progress=bar,
            )
    finally:
        bar.close()
    click.echo(f"run          {model}/{mode}")
    click.echo(f"instances    {outcome.total} ({outcome.asked} asked now)")
    click.echo(
        "status       " + "  ".join(f"{k} {n}" for k, n in sorted(outcome.by_status.items()))
    )
    click.echo(f"written      {outcome.out}")
