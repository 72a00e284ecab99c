"""sqlgold generate end to end against a real loopback chat server, then sqlgold score run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.inputs.schemas import validation_errors
from score.inputs.split import split_tasks
from score.inputs.task_set import instances

from .chat_server import Raw, Reply, Status
from .conftest import GROUNDING, TASKS, write_tasks


def generate(server, tasks, out, db, *extra: str):
    args = ["generate", str(tasks), "--model", "scripted", "--base-url", server.url]
    args += ["--out", str(out), "--db", str(db), "--grounding", str(GROUNDING), "-q", *extra]
    return CliRunner().invoke(main, args)


def score(tasks, preds, out, db, *extra: str):
    """``score run`` of ``preds``; every task unless ``extra`` names a split."""
    split = [] if "--split" in extra else ["--split", "all"]
    args = ["score", "run", str(tasks), str(preds), "--out", str(out), "--db", str(db), *split]
    args += ["--cache", str(Path(out).parent / "cache"), "--resamples", "50", "-q", *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    with (Path(out) / "results.jsonl").open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    summary = json.loads((Path(out) / "summary.json").read_text(encoding="utf-8"))
    return {(r["task_id"], r["language"]): r for r in records}, summary


def read_lines(path) -> list[dict]:
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_reference_answers_for_every_task_score_ex_one(chat_server, all_tasks, omop_db, tmp_path):
    preds = tmp_path / "preds.jsonl"
    result = generate(chat_server, TASKS, preds, omop_db, "--split", "all", "--jobs", "4")
    assert result.exit_code == 0, result.output
    every = instances(all_tasks)
    assert len(chat_server.requests) == len(every)  # each instance asked once
    lines = read_lines(preds)
    assert [(r["task_id"], r["language"]) for r in lines] == sorted(i.key for i in every)
    for line in lines:
        assert validation_errors("predictions", line) == [], line
        assert line["run"] == "scripted/zero-shot" and line["status"] == "ok"
        assert line["usage"]["prompt_tokens"] > 1000 and line["attempts"] == 1
    assert len({line["prompt_schema_sha256"] for line in lines}) == 1
    run = json.loads((tmp_path / "preds.run.json").read_text())
    assert run["finished"] and run["by_status"] == {"ok": len(every)}
    assert run["schema_sha256"] == lines[0]["prompt_schema_sha256"]
    assert not (tmp_path / "preds.jsonl.journal").exists()
    outcomes, summary = score(TASKS, preds, tmp_path / "scored", omop_db)
    assert summary["ex"] == 1.0
    assert {r["outcome"] for r in outcomes.values()} == {"correct", "abstained"}


def pick(tasks, n):
    answerable = [t for t in tasks if t["answerable"] and t["tier"] == "simple"][:n]
    return answerable + [next(t for t in tasks if not t["answerable"])]


def test_each_scripted_fault_lands_in_its_outcome(chat_server, all_tasks, omop_db, tmp_path):
    chosen = pick(all_tasks, 11)
    tasks = write_tasks(tmp_path / "tasks.jsonl", chosen)
    q = [" ".join(t["questions"]["en"].split()) for t in chosen]
    gold = [t["gold_sql"] for t in chosen]
    script = {
        0: [Reply(f"```sql\n{gold[0]}\n```")],
        1: [Reply("```sql\nSELECT 42 AS n\n```")],
        2: [Reply(f"Sure! Here it is:\n```sql\n{gold[2]}\n```\nIt counts the rows asked for.")],
        3: [Reply("I am not sure.\n```\nABSTAIN\n```")],
        4: [Reply("Let me think step by step about the persons table and", "length")],
        5: [Status(429, {"Retry-After": "1"}), Reply(f"```sql\n{gold[5]}\n```")],
        6: [Status(500)],
        7: [Reply("too slow", delay=2.0), Reply(f"```sql\n{gold[7]}\n```")],
        8: [Raw('{"choices": [ not json')],
        9: [Reply(f"```sql\n{gold[9]}\n```\nAnd now let me also explain", "length")],
        10: [Reply("The question is about persons.")],
    }
    for i, actions in script.items():
        chat_server.script[q[i]] = actions
    preds = tmp_path / "preds.jsonl"
    result = generate(
        chat_server, tasks, preds, omop_db, "--split", "all", "--language", "en",
        "--retries", "2", "--retry-backoff", "0.01", "--request-timeout", "0.5",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = {r["task_id"]: r for r in read_lines(preds)}
    ids = [t["id"] for t in chosen]
    status = [lines[i]["status"] for i in ids]
    assert status == ["ok"] * 4 + ["cut_off", "ok", "generation_error", "ok"] + [
        "generation_error", "cut_off", "ok", "ok"
    ]  # fmt: skip
    assert [lines[i]["attempts"] for i in ids][5:9] == [2, 3, 2, 3]
    assert "HTTP 500" in lines[ids[6]]["error"] and "output" not in lines[ids[6]]
    assert "not a chat completion" in lines[ids[8]]["error"]
    assert lines[ids[4]]["finish_reason"] == "length"
    for line in lines.values():
        assert validation_errors("predictions", line) == [], line
    outcomes, _ = score(tasks, preds, tmp_path / "scored", omop_db)
    got = [outcomes[(i, "en")]["outcome"] for i in ids]
    assert got == [
        "correct", "mismatch", "correct", "abstained", "cut_off", "correct",
        "generation_error", "correct", "generation_error", "correct", "format_failure",
        "abstained",
    ]  # fmt: skip


def test_rag_prompts_carry_their_chunks_and_jobs_do_not_change_the_file(
    chat_server, all_tasks, omop_db, tmp_path
):
    split = split_tasks(all_tasks)
    runs = []
    for jobs in ("1", "3"):
        preds = tmp_path / f"preds-{jobs}.jsonl"
        result = generate(
            chat_server, TASKS, preds, omop_db, "--mode", "rag", "--language", "ko",
            "--jobs", jobs, "--top-k", "3", "--today", "2025-12-31",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        runs.append(preds)
    first, second = (read_lines(p) for p in runs)
    measured = ("latency_s", "usage")
    assert [{k: v for k, v in r.items() if k not in measured} for r in first] == [
        {k: v for k, v in r.items() if k not in measured} for r in second
    ]
    test_ids = {t["id"] for t in split["test"]}
    assert {r["task_id"] for r in first} <= test_ids and {r["language"] for r in first} == {"ko"}
    for line in first:
        ids = line["context"].split("\n")
        assert len(ids) == 3 and line["mode"] == "rag" and line["today"] == "2025-12-31"
        assert not {i.removeprefix("example:") for i in ids} & test_ids
    body = chat_server.requests[0].body["messages"][1]["content"]
    assert "Reference material retrieved for this question" in body and "[3] " in body


def test_a_resumed_run_asks_again_only_what_is_missing(chat_server, all_tasks, omop_db, tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl", pick(all_tasks, 6))
    preds = tmp_path / "preds.jsonl"
    assert generate(chat_server, tasks, preds, omop_db, "--split", "all").exit_code == 0
    before = preds.read_bytes()
    again = generate(chat_server, tasks, preds, omop_db, "--split", "all")
    assert again.exit_code == 1 and "pass --resume" in again.output
    asked = len(chat_server.requests)
    resumed = generate(chat_server, tasks, preds, omop_db, "--split", "all", "--resume")
    assert resumed.exit_code == 0 and len(chat_server.requests) == asked
    assert preds.read_bytes() == before
    other = generate(
        chat_server, tasks, preds, omop_db, "--split", "all", "--resume", "--mode", "rag"
    )
    assert other.exit_code == 1 and "--resume of a different run: run, mode" in other.output


def test_a_failing_endpoint_stops_the_run_and_resume_completes_it(
    chat_server, all_tasks, omop_db, tmp_path
):
    chosen = pick(all_tasks, 6)
    tasks = write_tasks(tmp_path / "tasks.jsonl", chosen)
    preds = tmp_path / "preds.jsonl"
    down = chat_server.default
    chat_server.default = lambda q: Status(503)
    failed = generate(
        chat_server, tasks, preds, omop_db, "--split", "all", "--retries", "0",
        "--max-consecutive-errors", "3",
    )  # fmt: skip
    assert failed.exit_code == 1 and failed.output.count("\n") == 1
    assert "3 instances in a row failed" in failed.output and "--resume" in failed.output
    assert not preds.exists()
    journal = read_lines(tmp_path / "preds.jsonl.journal")
    assert [r["status"] for r in journal] == ["generation_error"] * 3
    chat_server.default = down
    asked = len(chat_server.requests)
    done = generate(chat_server, tasks, preds, omop_db, "--split", "all", "--resume")
    assert done.exit_code == 0, done.output
    assert len(chat_server.requests) - asked == len(instances(chosen))  # errors asked again
    assert {r["status"] for r in read_lines(preds)} == {"ok"}


def test_a_wrong_model_name_stops_the_run_at_once(chat_server, all_tasks, omop_db, tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl", pick(all_tasks, 3))
    chat_server.default = lambda q: Status(404)
    result = generate(chat_server, tasks, tmp_path / "p.jsonl", omop_db, "--split", "all")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "answered HTTP 404" in result.output and len(chat_server.requests) == 1


def test_resume_after_a_kill_asks_only_for_what_is_missing(
    chat_server, all_tasks, omop_db, tmp_path
):
    """A real `sqlgold generate` is killed (SIGKILL) mid-run, then resumed."""
    slow = chat_server.default
    chat_server.default = lambda q: Reply(slow(q).content, delay=0.05)
    preds = tmp_path / "preds.jsonl"
    args = [sys.executable, "-m", "curate.cli", "generate", str(TASKS), "--model", "scripted"]
    args += ["--base-url", chat_server.url, "--out", str(preds), "--db", str(omop_db)]
    args += ["--language", "en", "--jobs", "2", "-q"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(chat_server.requests) < 12 and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert len(chat_server.requests) >= 12
    assert not preds.exists()  # nothing half-written: the file appears only when complete
    journal = tmp_path / "preds.jsonl.journal"
    kept = {
        (r["task_id"], r["language"])
        for r in (
            json.loads(x) for x in journal.read_text().splitlines(keepends=True) if x.endswith("\n")
        )
    }
    assert kept
    first_run = len(chat_server.requests)
    chat_server.default = slow
    resumed = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    wanted = [i for i in instances(split_tasks(all_tasks)["test"]) if i.language == "en"]
    by_question = {" ".join(i.question.split()): i.key for i in wanted}
    asked_again = [by_question[r.question] for r in chat_server.requests[first_run:]]
    assert len(asked_again) == len(set(asked_again))  # nobody asked twice
    assert set(asked_again) == {i.key for i in wanted} - kept  # exactly what was missing
    lines = read_lines(preds)
    assert [(r["task_id"], r["language"]) for r in lines] == sorted(i.key for i in wanted)
    assert not journal.exists()


def test_without_the_extra_the_error_says_how_to_install_it(omop_db, tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "openai.py").write_text("raise ImportError('blocked for this test')\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, "-m", "curate.cli", "generate", str(TASKS), "--model", "m",
         "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "p.jsonl"),
         "--db", str(omop_db)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert "pip install 'sqlgold[generate]'" in result.stderr and "openai" in result.stderr


@pytest.mark.parametrize("command", [["generate", "--help"], ["prompt", "--help"]])
def test_help_names_the_options(command):
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0 and "--mode" in result.output


def test_zero_shot_and_rag_runs_compare_with_mcnemar(chat_server, all_tasks, omop_db, tmp_path):
    """The loop the README shows: generate both modes, score both, compare them."""
    chosen = pick(all_tasks, 16)
    tasks = write_tasks(tmp_path / "tasks.jsonl", chosen)
    reference = chat_server.default
    helped = {" ".join(t["questions"]["en"].split()) for t in chosen[:8] if t["answerable"]}

    def answer(question: str):
        body = chat_server.requests[-1].body["messages"][1]["content"]
        if question in helped and "Reference material" not in body:
            return Reply("```sql\nSELECT 0 AS wrong\n```")  # zero-shot gets these wrong
        return reference(question)

    chat_server.default = answer
    runs = {}
    for mode in ("zero-shot", "rag"):
        preds = tmp_path / f"{mode}.jsonl"
        args = ("--mode", mode, "--split", "all")
        assert generate(chat_server, tasks, preds, omop_db, *args).exit_code == 0
        runs[mode] = tmp_path / "runs" / mode
        score(tasks, preds, runs[mode], omop_db)
    result = CliRunner().invoke(
        main, ["score", "compare", str(runs["rag"]), str(runs["zero-shot"]), "--resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    comparison = json.loads(
        (tmp_path / "runs" / "rag_vs_zero-shot" / "comparison.json").read_text()
    )
    assert comparison["b"] == len(helped) and comparison["c"] == 0
    assert comparison["p_value"] == pytest.approx(2 * 0.5 ** len(helped))
    answerable = len([i for i in instances(chosen) if i.task["answerable"]])
    assert comparison["scores"]["ex"]["diff"] == pytest.approx(len(helped) / answerable)
