"""report.md: the summaries of one or more runs as Markdown a researcher can paste.

:func:`render_report` reads summaries (:func:`score.statistics.summary.summarize`) and,
optionally, a comparison (:func:`score.statistics.stats.compare_runs`), and refuses any format
it does not know.
The text depends on its inputs only (no clock, no paths), so the same inputs give the
same bytes.

>>> from score.statistics.metrics import record
>>> from score.statistics.summary import summarize
>>> s = summarize([record("q1", "correct"), record("q2", "mismatch")], resamples=100)
>>> meta = {"database": "db1", "task_set": "t@1", "comparator_profile": "sqlgold"}
>>> text = render_report([s], meta=meta)
>>> [line for line in text.splitlines() if line.startswith("| EX ")]
['| EX | 0.500 [0.000, 1.000] |']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from score.report.peer_scores import markdown_sections
from score.report.suite_section import suite_sections
from score.scoring.outcomes import EXCLUDED, OUTCOMES, Outcome
from score.statistics.metrics import BREAKDOWNS, NO_GROUP, group_order
from score.statistics.stats import COMPARISON_FORMAT
from score.statistics.summary import SUMMARY_FORMATS_READ

#: Meta lines every report carries: key -> label.
REQUIRED_META: dict[str, str] = {
    "database": "Database",
    "task_set": "Task set",
    "comparator_profile": "Comparator profile",
}

NONE = "–"

PRIORS_NOTE = (
    "Priors are input-blind baselines scored by the same code as the models (seed 004): "
    "abstaining on every item, the prior of every reliability score, and SELECT 0 on every "
    "item, the prior of execution accuracy. A score says something about a model only where "
    "it clears them."
)


def _number(value: float | None, digits: int) -> str:
    if value is None:
        return NONE
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _cell(value: float | None, ci: Sequence[float] | None, digits: int) -> str:
    if value is None:
        return NONE
    text = _number(value, digits)
    if ci is not None:
        text += f" [{_number(ci[0], digits)}, {_number(ci[1], digits)}]"
    return text


def _get(tree: Mapping[str, Any], path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(tree, Mapping) or key not in tree:
            return None
        tree = tree[key]
    return tree


def _ci(tree: Mapping[str, Any], path: Sequence[str]) -> Any:
    return _get(tree, (path[0] + "_ci", *path[1:]))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def score_rows(
    rs_keys: Sequence[str], *, suite: bool = False
) -> list[tuple[str, tuple[str, ...], int]]:
    """The headline scores: (label, path in a summary, decimals); with ``suite``, TS
    (test-suite accuracy) beside EX.

    RS keys come in any order (summary.json sorts them as text); they are shown by
    penalty, N last.

    >>> [label for label, _, _ in score_rows(["0", "N", "10", "5"])][:5]
    ['EX', 'RS(0)', 'RS(5)', 'RS(10)', 'RS(N)']
    """
    ordered = sorted(rs_keys, key=lambda k: (k == "N", float(k) if k != "N" else 0.0))
    return [
        ("EX", ("ex",), 3),
        *([("TS", ("ts",), 3)] if suite else []),
        *((f"RS({k})", ("rs", k), 2) for k in ordered),
        ("Abstained, answerable", ("abstention", "answerable"), 3),
        ("Abstained, unanswerable", ("abstention", "unanswerable"), 3),
        ("Cut off", ("cut_off_rate",), 3),
        ("Format failure", ("format_failure_rate",), 3),
        ("LF accuracy", ("lf",), 3),
    ]


def run_label(summary: Mapping[str, Any], index: int) -> str:
    """How a run is named in the report and chart: its label, marked when it is a prior."""
    name = summary.get("run") or f"run {index + 1}"
    return f"{name} (prior)" if summary.get("prior") else str(name)


def check_inputs(
    runs: Sequence[Mapping[str, Any]], comparison: Mapping[str, Any] | None
) -> list[Mapping[str, Any]]:
    """The runs, models first and priors after; ValueError for an unknown format or runs
    bootstrapped with different settings."""
    if not runs:
        raise ValueError("a report needs at least one run summary")
    for i, s in enumerate(runs):
        if s.get("format") not in SUMMARY_FORMATS_READ:
            known = ", ".join(sorted(SUMMARY_FORMATS_READ))
            raise ValueError(
                f"run {i + 1}: summary format {s.get('format')!r}, expected one of {known}"
            )
    if comparison is not None and comparison.get("format") != COMPARISON_FORMAT:
        raise ValueError(
            f"comparison format {comparison.get('format')!r}, expected {COMPARISON_FORMAT!r}"
        )
    settings = {_boot_key(s["bootstrap"]) for s in runs}
    if comparison is not None:
        settings.add(_boot_key(comparison["bootstrap"]))
    if len(settings) > 1:
        raise ValueError(f"runs were bootstrapped with different settings: {sorted(settings)}")
    return [s for s in runs if not s.get("prior")] + [s for s in runs if s.get("prior")]


def _boot_key(boot: Mapping[str, Any]) -> tuple[Any, ...]:
    return (boot["seed"], boot["resamples"], boot["confidence"], boot["generator"])


def _meta_lines(meta: Mapping[str, str], boot: Mapping[str, Any]) -> list[str]:
    missing = [k for k in REQUIRED_META if not meta.get(k)]
    if missing:
        raise ValueError(f"report meta lacks {', '.join(missing)}")
    lines = [f"- {label}: {meta[key]}" for key, label in REQUIRED_META.items()]
    lines += [
        f"- {key.replace('_', ' ').capitalize()}: {value}"
        for key, value in meta.items()
        if key not in REQUIRED_META
    ]
    lines.append(
        f"- Intervals: {boot['confidence']:.0%} percentile bootstrap, {boot['resamples']:,} "
        f"resamples of questions (all languages of a question together), seed {boot['seed']} "
        f"({boot['generator']})"
    )
    return lines


def _headline(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    rs_keys = list(runs[0].get("rs") or {})
    header = ["Score", *(run_label(s, i) for i, s in enumerate(runs))]
    rows = [
        ["Instances scored (N)", *(str(s["n"]) for s in runs)],
        ["Questions", *(str(s["n_questions"]) for s in runs)],
        [
            "Answerable / unanswerable",
            *(f"{s['n_answerable']} / {s['n_unanswerable']}" for s in runs),
        ],
    ]
    for label, path, digits in score_rows(rs_keys, suite=any("ts" in s for s in runs)):
        rows.append([label, *(_cell(_get(s, path), _ci(s, path), digits) for s in runs)])
    return _table(header, rows)


def _breakdown(runs: Sequence[Mapping[str, Any]], key: str, name: str) -> list[str]:
    """One row per group and run; RS(c) of the first c only when some run has unanswerable
    instances. Empty when every record falls in no group."""
    groups = sorted({g for s in runs for g in s.get(name, {})}, key=group_order)
    if not groups or groups == [NO_GROUP]:
        return []
    rs_key = next(iter(runs[0].get("rs") or {}), None)
    with_rs = rs_key is not None and any(s["n_unanswerable"] for s in runs)
    with_ts = any("ts" in s for s in runs)
    header = [key, "run", "instances", "EX"] + (["TS"] if with_ts else [])
    header += [f"RS({rs_key})"] if with_rs else []
    rows = []
    for g in groups:
        for i, s in enumerate(runs):
            block = s.get(name, {}).get(g)
            if block is None:
                continue
            row = [g, run_label(s, i), str(block["n"]), _cell(block["ex"], block["ex_ci"], 3)]
            if with_ts:
                row.append(_cell(block.get("ts"), block.get("ts_ci"), 3))
            if with_rs:
                row.append(_cell(_get(block, ("rs", rs_key)), _ci(block, ("rs", rs_key)), 2))
            rows.append(row)
    return [f"## By {key}", "", *_table(header, rows), ""]


def _outcomes(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    header = ["Outcome", *(run_label(s, i) for i, s in enumerate(runs))]
    rows = []
    for outcome in OUTCOMES:
        counts = [s["outcomes"]["counts"].get(outcome, 0) for s in runs]
        if not any(counts):
            continue
        cells = []
        for s, n in zip(runs, counts, strict=True):
            rate = s["outcomes"]["rates"].get(outcome)
            cells.append(f"{n} (excluded)" if outcome in EXCLUDED else f"{n} ({_number(rate, 3)})")
        rows.append([outcome, *cells])
    return ["## Outcomes", "", "Count (share of scored instances).", "", *_table(header, rows), ""]


def _outcomes_by_tier(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Instances per outcome in each tier (and run), outcomes that occur only."""
    present = [
        o
        for o in OUTCOMES
        if any(b["outcomes"]["counts"].get(o) for s in runs for b in s.get("by_tier", {}).values())
    ]
    tiers = sorted({t for s in runs for t in s.get("by_tier", {})}, key=group_order)
    if not present or not tiers:
        return []
    rows = []
    for tier in tiers:
        for i, s in enumerate(runs):
            block = s.get("by_tier", {}).get(tier)
            if block is not None:
                counts = block["outcomes"]["counts"]
                rows.append([tier, run_label(s, i), *(str(counts.get(o, 0)) for o in present)])
    return ["## Outcomes by tier", "", *_table(["tier", "run", *present], rows), ""]


def _failure_reasons(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The most common reasons of failed answers, per run that has them."""
    lines: list[str] = []
    for i, s in enumerate(runs):
        reasons = s.get("failure_reasons") or []
        if not reasons or s.get("prior"):
            continue
        rows = [[str(r["count"]), r["outcome"], _md(r["reason"])] for r in reasons]
        lines += [
            f"### {run_label(s, i)}",
            "",
            *_table(["instances", "outcome", "reason"], rows),
            "",
        ]
    if not lines:
        return []
    head = "Numbers and quoted names in a reason are blanked so that alike reasons count together."
    return ["## Most common failure reasons", "", head, "", *lines]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _languages(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The languages each run scored, when the summary says (a subset chosen with
    ``--language`` is named as such)."""
    lines = []
    for i, s in enumerate(runs):
        langs = s.get("languages")
        if s.get("prior") or not langs:
            continue
        chosen = ", chosen with --language" if langs.get("chosen") else ""
        lines.append(
            f"- Languages scored ({run_label(s, i)}): {', '.join(langs['scored'])} of "
            f"{', '.join(langs['all'])}{chosen}"
        )
    return lines


def _how_run(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """How each run's predictions reached the engine: as written, or transpiled (and
    from which dialect); and the session settings that bear on a query's meaning."""
    lines: list[str] = []
    for i, s in enumerate(runs):
        if s.get("prior"):
            continue
        name = run_label(s, i)
        moved = s.get("predictions_transpiled")
        if moved:
            lines.append(
                f"- {name}: predictions written for {moved['from']}, transpiled by sqlglot to "
                f"{moved['to']} before they ran ({moved['instances']} instance(s)); "
                "what ran is each instance's executed_sql."
            )
        else:
            lines.append(f"- {name}: predictions ran as written (a fixed today aside).")
        session = (s.get("meta") or {}).get("session")
        if session:
            shown = "; ".join(f"{k} {v}" for k, v in session.items())
            lines.append(
                f"  Session: {shown} (the time zone fixed by sqlgold, the rest the server's)."
            )
    return ["## How the predictions ran", "", *lines, ""] if lines else []


def _warnings(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Warnings about the inputs: many missing instances, bad prediction lines skipped
    (``--lenient``), gold results that drifted."""
    lines: list[str] = []
    for i, s in enumerate(runs):
        if s.get("prior"):
            continue
        name = run_label(s, i)
        counts = s.get("outcomes", {}).get("counts", {})
        total = s.get("n_instances", 0)
        missing = counts.get(Outcome.MISSING, 0)
        if total and missing * 2 > total:
            lines.append(
                f"- **{name}: {missing} of {total} instances have no prediction (missing).** "
                "Check the predictions' task ids, languages and run label, and the split scored."
            )
        if counts.get("gold_drift"):
            lines.append(
                f"- **{name}: {counts['gold_drift']} instances are gold_drift**: their gold "
                "result is not the one the task was verified with (another database or engine); "
                "they are left out of every score."
            )
        for lang, n in (s.get("languages") or {}).get("unanswered", {}).items():
            lines.append(
                f"- **{name}: no prediction answers any {lang} question**: its {n} instance(s) "
                "count as missing (score run --language leaves a language out, and says so)."
            )
        for note in s.get("report_notes") or ():  # what the report did to the run's summary
            lines.append(f"- {name}: {_md(note)}.")
        problems = s.get("input_problems") or []
        if problems:
            lines.append(
                f"- **{name}: {len(problems)} prediction line(s) could not be used** "
                "(scored with --lenient; their instances count as missing):"
            )
            lines += [f"  - {_md(p)}" for p in problems[:20]]
            if len(problems) > 20:
                lines.append(f"  - ... and {len(problems) - 20} more (summary.json lists all)")
    return ["## Warnings", "", *lines, ""] if lines else []


def _comparison(cmp: Mapping[str, Any]) -> list[str]:
    a, b = cmp.get("run_a") or "A", cmp.get("run_b") or "B"
    conf = f"{cmp['bootstrap']['confidence']:.0%}"
    lines = [
        f"## Paired comparison: {a} (A) vs {b} (B)",
        "",
        f"On {cmp['n']} instances ({cmp['n_questions']} questions) scored in both runs "
        f"({cmp['n_gold_error_excluded']} excluded as gold_error): A right and B wrong "
        f"b = {cmp['b']}, A wrong and B right c = {cmp['c']}; exact McNemar "
        f"p {p_clause(cmp['p_value'])}. Right means {cmp['right']}.",
        "",
    ]
    rs_keys = list(cmp["scores"].get("rs") or {})
    rows = []
    for label, path, digits in score_rows(rs_keys, suite="ts" in cmp["scores"]):
        entry = _get(cmp["scores"], path) or {}
        rows.append(
            [
                label,
                _number(entry.get("a"), digits),
                _number(entry.get("b"), digits),
                _cell(entry.get("diff"), entry.get("ci"), digits),
            ]
        )
    lines += _table(["Score", "A", "B", f"A − B [{conf} CI]"], rows)
    if "brittleness" in cmp:
        br = cmp["brittleness"]
        lines += [
            "",
            f"Brittleness (EX of A minus EX of B, B without its retrieved cases; "
            f"{br['n']} answerable instances): {_cell(br['value'], br['ci'], 3)}.",
        ]
    tiers = sorted(cmp.get("by_tier", {}), key=group_order)
    if len(tiers) > 1:
        rows = [
            [
                t,
                str(blk["n"]),
                str(blk["b"]),
                str(blk["c"]),
                p_text(blk["p_value"]),
                _cell(blk["scores"]["ex"]["diff"], blk["scores"]["ex"]["ci"], 3),
            ]
            for t in tiers
            for blk in [cmp["by_tier"][t]]
        ]
        lines += ["", *_table(["tier", "n", "b", "c", "p", f"EX A − B [{conf} CI]"], rows)]
    return lines + [""]


def p_text(p: float) -> str:
    """A p-value as printed: four decimals, or '< 0.0001'.

    >>> p_text(0.01249), p_text(1e-27)
    ('0.0125', '< 0.0001')
    """
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}"


def p_clause(p: float) -> str:
    """A p-value after 'p': '= 0.0125' or '< 0.0001'."""
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


def render_report(
    runs: Sequence[Mapping[str, Any]],
    comparison: Mapping[str, Any] | None = None,
    *,
    meta: Mapping[str, str],
) -> str:
    """report.md for the run summaries (priors flagged by their ``prior`` key, listed after
    the models) and an optional paired comparison.

    ``meta`` must name the ``database`` (fingerprint), ``task_set`` (name and version) and
    ``comparator_profile``; any other entry is added as a line of its own.
    """
    ordered = check_inputs(runs, comparison)
    boot = ordered[0]["bootstrap"]
    lines = ["# sqlgold score report", "", *_meta_lines(meta, boot), *_languages(ordered), ""]
    if comparison is not None:  # the test first: what a comparison is for
        lines += _comparison(comparison)
    lines += _warnings(ordered)
    lines += ["## Headline", "", *_headline(ordered), ""]
    lines += _how_run(ordered)
    lines += [
        "EX is over answerable instances; RS(c) is EHRSQL 2024's reliability score x100 "
        "(+1 right or rightly abstained, 0 abstained on an answerable question, -c anything "
        "else) over all scored instances, N their number; gold_error and gold_drift instances "
        "are in no rate. Cut off and format failure are shares of scored instances.",
        "",
    ]
    if any(s.get("prior") for s in ordered):
        lines += [PRIORS_NOTE, ""]
    lines += suite_sections(ordered)
    for key, name in BREAKDOWNS.items():
        lines += _breakdown(ordered, key, name)
    lines += _outcomes(ordered)
    lines += _outcomes_by_tier(ordered)
    lines += _failure_reasons(ordered)
    lines += markdown_sections(ordered)  # TEXT-TO-OMOP's metrics, efficiency, if scored
    return "\n".join(lines).rstrip("\n") + "\n"
