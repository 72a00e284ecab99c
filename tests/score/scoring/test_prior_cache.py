"""The priors' summaries are kept in the cache folder: a scoring that changes only its
predictions takes them from there, byte for byte what scoring them again gives; any
change to what they depend on scores them again; --no-cache keeps nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from score.execution.executor import Executor
from score.inputs.task_set import load_tasks
from score.scoring import run as run_module
from score.scoring.prior_cache import PRIOR_FOLDER
from score.scoring.run import ScoringOptions, run_scoring
from tests.paths import REPO

PROJECT_TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"


def _predictions(path: Path, n: int) -> Path:
    tasks = [t for t in load_tasks(PROJECT_TASKS) if t["answerable"]][:n]
    path.write_text(
        "".join(json.dumps({"task_id": t["id"], "sql": t["gold_sql"]}) + "\n" for t in tasks)
    )
    return path


def _score(ex: Executor, tmp_path: Path, name: str, answered: int, cache: Path | None) -> None:
    """Score ``answered`` tasks' golds into ``tmp_path / name`` with the cache ``cache``."""
    preds = _predictions(tmp_path / f"{name}.jsonl", answered)
    run_scoring(PROJECT_TASKS, preds, tmp_path / name, ex, ScoringOptions(cache_dir=cache))


def _no_prior_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the priors were scored again")

    monkeypatch.setattr(run_module, "prior_predictions", refuse)


def test_priors_come_from_the_cache_when_only_the_predictions_change(
    omop_db, tmp_path, monkeypatch
):
    cache = tmp_path / "cache"
    with Executor(omop_db) as ex:
        _score(ex, tmp_path, "a", 1, cache)
        kept = list((cache / PRIOR_FOLDER).glob("*.json"))
        assert len(kept) == 1
        with monkeypatch.context() as m:
            _no_prior_scored(m)
            _score(ex, tmp_path, "b", 3, cache)
        # scored again from nothing, they are the same bytes
        _score(ex, tmp_path, "c", 2, None)
    first, second, fresh = (
        (tmp_path / name / "priors.json").read_bytes() for name in ("a", "b", "c")
    )
    assert first == second == fresh
    assert json.loads(first)  # two priors, each a summary
    assert (tmp_path / "b" / "summary.json").read_bytes() != (
        tmp_path / "a" / "summary.json"
    ).read_bytes()


def test_a_change_the_priors_depend_on_scores_them_again(omop_db, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    preds = _predictions(tmp_path / "p.jsonl", 1)
    with Executor(omop_db) as ex:
        run_scoring(PROJECT_TASKS, preds, tmp_path / "a", ex, ScoringOptions(cache_dir=cache))
        with monkeypatch.context() as m:
            _no_prior_scored(m)
            for options in (
                ScoringOptions(cache_dir=cache, profile="bird"),
                ScoringOptions(cache_dir=cache, seed=1),
                ScoringOptions(cache_dir=cache, split="test"),
            ):
                with pytest.raises(AssertionError, match="scored again"):
                    run_scoring(PROJECT_TASKS, preds, tmp_path / "x", ex, options)
                # the failed run left its folder: the next one starts afresh
                shutil.rmtree(tmp_path / "x", ignore_errors=True)


def test_an_unreadable_cache_file_is_scored_again_and_replaced(omop_db, tmp_path):
    cache = tmp_path / "cache"
    preds = _predictions(tmp_path / "p.jsonl", 1)
    with Executor(omop_db) as ex:
        run_scoring(PROJECT_TASKS, preds, tmp_path / "a", ex, ScoringOptions(cache_dir=cache))
        (kept,) = (cache / PRIOR_FOLDER).glob("*.json")
        good = kept.read_bytes()
        kept.write_text('{"format": "sqlgold.prior-cache/1", "summaries": 3}')
        run_scoring(PROJECT_TASKS, preds, tmp_path / "b", ex, ScoringOptions(cache_dir=cache))
    assert kept.read_bytes() == good
    assert (tmp_path / "a" / "priors.json").read_bytes() == (
        tmp_path / "b" / "priors.json"
    ).read_bytes()


def test_no_cache_keeps_no_priors(omop_db, tmp_path):
    with Executor(omop_db) as ex:
        _score(ex, tmp_path, "a", 1, None)
    assert not list(tmp_path.rglob(PRIOR_FOLDER))


def test_a_prior_runs_its_constant_query_once_not_once_per_instance(omop_db, monkeypatch):
    """SELECT 0 answers every instance: its result is shared within the pass (on a
    server, 451 round trips become one), and every record is what running it for each
    instance gives."""
    from score.execution.executor import QueryStream
    from score.scoring.answer import RunAnswer
    from score.scoring.gold_cache import GoldCache
    from score.scoring.pipeline import ScoringContext
    from score.scoring.priors import prior_predictions
    from score.scoring.run_lane import SENT_AHEAD
    from tests.task_factory import scored_records

    tasks = load_tasks(PROJECT_TASKS)
    sent = []
    original = QueryStream.send

    def counting(self, request):
        if isinstance(request, RunAnswer):
            sent.append(request.sql)
        return original(self, request)

    monkeypatch.setattr(QueryStream, "send", counting)

    def records(shared):
        with Executor(omop_db) as ex:
            ctx = ScoringContext(
                ex, GoldCache(None, ex), "sqlgold", "p", gold_from_pin=True, shared_runs=shared
            )
            found = scored_records(tasks, prior_predictions(tasks, "select0"), ctx)
        for r in found:
            r.pop("timings")
        return found

    each = records(None)
    runs_each = len(sent)
    sent.clear()
    shared = records({})
    assert shared == each
    assert runs_each == len(each)  # run for each instance, every one of them
    assert 1 <= len(sent) <= 1 + SENT_AHEAD < runs_each
