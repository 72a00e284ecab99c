"""A generation run: every selected instance's prompt sent to a model, each answer written
as a prediction the scorer reads (``schemas/predictions.schema.json``).

* **Selection**: the tasks of one side of the leakage-aware split (``test`` by
  default; :func:`score.inputs.split.split_tasks`), in the languages asked (all by default).
* **Prompts**: :mod:`.prompt`; in ``rag`` mode with the top-k chunks of
  :mod:`.retrieval`, whose ids go into the prediction's ``context`` (one per line).
* **Predictions**: run label ``<model>/<mode>``; the raw ``output``; ``status`` ``ok``,
  ``cut_off`` (the model stopped at the token limit, ``finish_reason`` ``length``) or
  ``generation_error`` (no output; the call failed after its retries, ``error`` says
  why); the prompt's three sha256s and today; token ``usage``, ``latency_s`` and
  ``attempts``, the only fields that are measured rather than determined by the inputs.
* **Files**: :mod:`.journal` (resumable, atomic, sorted by task and language).
* **Stopping**: after ``max_consecutive_errors`` failed instances in a row the run
  stops (an endpoint that is down would otherwise fail every instance slowly); what was
  answered is kept, and ``--resume`` continues.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from score.defaults import DEFAULT_GROUNDING
from score.execution.executor import Executor
from score.generate.client import CallFailed, ChatClient, ChatReply, ChatSettings
from score.generate.database_facts import gather_facts
from score.generate.errors import GenerationError
from score.generate.journal import GENERATION_ERROR, PredictionFiles
from score.generate.prompt import RAG, Prompt, build_prompt
from score.generate.retrieval import DEFAULT_TOP_K, Index, build_index
from score.generate.schema_text import schema_sha256, schema_text
from score.generate.template import TEMPLATE_SHA256
from score.inputs.split import split_tasks
from score.inputs.task_set import Instance, instances, load_tasks
from score.versions import installed_versions

SPLITS = ("test", "train", "all")


@dataclass(frozen=True)
class Selection:
    """Which instances a run asks about, and the split that decides what may be shown."""

    split: str = "test"
    test_fraction: float = 0.5
    seed: int = 0
    languages: tuple[str, ...] = ()  # empty: every language of each task

    def describe(self) -> dict[str, Any]:
        return {"side": self.split, "test_fraction": self.test_fraction, "seed": self.seed}


@dataclass(frozen=True)
class PromptSettings:
    mode: str = "zero-shot"
    today: str | None = None  # overrides each task's own `today`
    top_k: int = DEFAULT_TOP_K
    grounding_dir: Path = DEFAULT_GROUNDING


@dataclass
class Prompter:
    """Builds the prompt of any instance of one task set on one database."""

    schema: str
    settings: PromptSettings
    index: Index | None = None
    grounding_sha256: str | None = None

    def today_for(self, task: dict[str, Any]) -> str | None:
        return self.settings.today or task.get("today") or None

    def prompt(self, instance: Instance) -> Prompt:
        hits = []
        if self.index is not None:
            hits = self.index.search(
                instance.question, self.settings.top_k, exclude_task=instance.task_id
            )
        return build_prompt(
            instance.question, self.schema, today=self.today_for(instance.task), hits=hits
        )


def split_sides(tasks: Sequence[dict[str, Any]], selection: Selection) -> dict[str, list]:
    sides = split_tasks(tasks, test_fraction=selection.test_fraction, seed=selection.seed)
    return {**sides, "all": list(tasks)}


def select_instances(tasks: Sequence[dict[str, Any]], selection: Selection) -> list[Instance]:
    """The instances of the chosen side, in the languages asked, sorted by task and
    language; an asked language no chosen task has is an error."""
    if selection.split not in SPLITS:
        raise GenerationError(f"unknown split {selection.split!r} (one of {', '.join(SPLITS)})")
    chosen = split_sides(tasks, selection)[selection.split]
    found = [
        i for i in instances(chosen) if not selection.languages or i.language in selection.languages
    ]
    have = {i.language for i in found}
    missing = [lang for lang in selection.languages if lang not in have]
    if missing:
        raise GenerationError(
            f"no task on the {selection.split} side has a question in {', '.join(missing)}"
        )
    return sorted(found, key=lambda i: i.key)


def make_prompter(
    executor: Executor,
    tasks: Sequence[dict[str, Any]],
    selection: Selection,
    settings: PromptSettings,
) -> Prompter:
    """The prompter: database text read through ``executor``; in rag mode the index of
    the grounding documents and the train side's examples (never a held-out answer)."""
    text = schema_text(gather_facts(executor))
    if settings.mode != RAG:
        return Prompter(text, settings)
    sides = split_sides(tasks, selection)
    index = build_index(settings.grounding_dir, sides["train"], sides["test"])
    digest = hashlib.sha256()
    for chunk in index.chunks:
        digest.update(f"{chunk.id}\x00{chunk.text}\x00".encode())
    return Prompter(text, settings, index, digest.hexdigest())


def prediction_record(
    instance: Instance,
    prompt: Prompt,
    run: str,
    model: str,
    mode: str,
    answer: ChatReply | CallFailed,
) -> dict[str, Any]:
    """One predictions.jsonl line (keys sorted when written)."""
    record: dict[str, Any] = {
        "task_id": instance.task_id,
        "language": instance.language,
        "run": run,
        "model": model,
        "mode": mode,
        "context": "\n".join(prompt.context_ids) if mode == RAG else None,
        "prompt_template_sha256": prompt.template_sha256,
        "prompt_schema_sha256": prompt.schema_sha256,
        "prompt_sha256": prompt.prompt_sha256,
        "today": prompt.today,
        "attempts": answer.attempts,
    }
    if isinstance(answer, CallFailed):
        record.update(status=GENERATION_ERROR, error=answer.message)
        return record
    record.update(
        output=answer.output,
        status="cut_off" if answer.finish_reason == "length" else "ok",
        finish_reason=answer.finish_reason,
        usage=answer.usage,
        latency_s=answer.latency_s,
    )
    return record


@dataclass
class GenerationOutcome:
    out: Path
    asked: int  # instances sent to the model by this call
    total: int  # instances selected
    by_status: dict[str, int] = field(default_factory=dict)


def _tasks_sha256(path: Path) -> str:
    from score.scoring.run import tasks_sha256  # the scorer's own definition of a task set's hash

    return tasks_sha256(path)


def run_generation(
    tasks_path: str | Path,
    out: str | Path,
    executor: Executor,
    chat: ChatSettings,
    *,
    selection: Selection = Selection(),
    prompt_settings: PromptSettings = PromptSettings(),
    jobs: int = 1,
    resume: bool = False,
    max_consecutive_errors: int = 10,
    progress: Callable[[int, int], None] | None = None,
    client: ChatClient | None = None,
) -> GenerationOutcome:
    """Generate predictions for the selected instances of ``tasks_path`` into ``out``."""
    tasks_path = Path(tasks_path)
    tasks = load_tasks(tasks_path)
    chosen = select_instances(tasks, selection)
    prompter = make_prompter(executor, tasks, selection, prompt_settings)
    mode = prompt_settings.mode
    run = f"{chat.model}/{mode}"
    meta = {
        "run": run,
        "model": chat.model,
        "mode": mode,
        "base_url": chat.base_url,
        "tasks": str(tasks_path),
        "tasks_sha256": _tasks_sha256(tasks_path),
        "split": selection.describe(),
        "languages": list(selection.languages) or None,
        "today": prompt_settings.today,
        "top_k": prompt_settings.top_k if mode == RAG else None,
        "max_tokens": chat.max_tokens,
        "temperature": chat.temperature,
        "token_limit_param": chat.token_limit_param,
        "template_sha256": TEMPLATE_SHA256,
        "schema_sha256": schema_sha256(prompter.schema),
        "grounding_sha256": prompter.grounding_sha256,
        "database": executor.db_path,
        "database_fingerprint": executor.fingerprint,
        "versions": installed_versions(("sqlgold", "openai", "bm25s")),
    }
    files = PredictionFiles(out, meta, resume=resume)
    answered = files.answered()
    todo = [i for i in chosen if i.key not in answered]
    total, finished = len(chosen), len(chosen) - len(todo)
    own_client = client is None
    client = client or ChatClient(chat)
    failures_in_a_row = 0
    try:
        if progress:
            progress(finished, total)
        for instance, prompt, answer in _answers(todo, prompter, client, jobs):
            files.append(prediction_record(instance, prompt, run, chat.model, mode, answer))
            finished += 1
            if progress:
                progress(finished, total)
            failures_in_a_row = failures_in_a_row + 1 if isinstance(answer, CallFailed) else 0
            if failures_in_a_row >= max_consecutive_errors:
                raise GenerationError(
                    f"{failures_in_a_row} instances in a row failed (last: {answer.message}); "
                    f"the answers so far are kept: fix the endpoint and run again with --resume",
                    path=str(out),
                )
    finally:
        files.close()
        if own_client:
            client.close()
    counts: dict[str, int] = {}
    for record in files.records.values():
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    files.finish({"instances": total, "by_status": dict(sorted(counts.items()))})
    return GenerationOutcome(Path(out), len(todo), total, counts)


def _answers(
    todo: Sequence[Instance], prompter: Prompter, client: ChatClient, jobs: int
) -> Iterator[tuple[Instance, Prompt, ChatReply | CallFailed]]:
    """Each instance with its prompt and answer, in completion order; prompts are built
    here (one thread), calls run on ``jobs`` threads with at most ``2 * jobs`` in flight."""

    def ask(prompt: Prompt) -> ChatReply | CallFailed:
        try:
            return client.complete(prompt.messages)
        except CallFailed as e:
            return e

    if jobs <= 1:
        for instance in todo:
            prompt = prompter.prompt(instance)
            yield instance, prompt, ask(prompt)
        return
    pending: dict[Future, tuple[Instance, Prompt]] = {}
    queue = iter(todo)
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="generate") as pool:
        try:
            while True:
                while len(pending) < 2 * jobs:
                    instance = next(queue, None)
                    if instance is None:
                        break
                    prompt = prompter.prompt(instance)
                    pending[pool.submit(ask, prompt)] = (instance, prompt)
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: pending[f][0].key):
                    instance, prompt = pending.pop(future)
                    yield instance, prompt, future.result()
        finally:
            for future in pending:
                future.cancel()
