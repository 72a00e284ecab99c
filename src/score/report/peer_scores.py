"""The scores a run may carry beside sqlgold's own: TEXT-TO-OMOP's metrics (a run scored
with the ``text2omop`` profile, :mod:`score.statistics.text2omop_metrics`), BIRD's soft
F1 (the ``bird`` profile, :mod:`score.statistics.soft_f1`) and an
efficiency score (``score run --efficiency``, :mod:`score.statistics.efficiency`), as
report.md sections and as the lines ``score run`` and ``score report`` print.

>>> summary = {"run": "m", "efficiency": {"method": "ves", "label": "VES", "runs": 10,
...            "score": 98.765, "n": 4, "n_correct": 2, "n_measured": 2, "n_failed": 0,
...            "ratio_median": 1.0, "ratio_min": 0.9, "ratio_max": 1.1}}
>>> summary_lines(summary)
['VES          98.77  (10 timed runs per query; 2 right answers measured, 0 failed, of 4)']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: TEXT-TO-OMOP's metrics in the order its evaluator prints them: (label, key).
TEXT2OMOP_ROWS: tuple[tuple[str, str], ...] = (
    ("EM", "em"),
    ("EMN", "emn"),
    ("ROUGE-L", "rouge_l"),
    ("Precision_ans", "prec_ans"),
    ("Recall_ans", "rec_ans"),
    ("F1_ans", "f1_ans"),
    ("Execution accuracy", "execution_accuracy"),
    ("Precision_exe", "prec_exe"),
    ("Recall_exe", "rec_exe"),
    ("F1_exe", "f1_exe"),
)


def _rs_keys(rs: Mapping[str, float]) -> list[str]:
    return sorted(rs, key=lambda k: (k == "N", float(k) if k != "N" else 0.0))


def _runs_text(e: Mapping[str, Any]) -> str:
    if e["method"] == "cost":
        return "EXPLAIN cost estimates, gold / prediction"
    return f"{e['runs']} timed runs per query"


def _score(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    """What ``score run`` / ``score report`` print for these scores (none: no lines)."""
    lines = []
    t = summary.get("text2omop")
    if t:
        main = (
            ("EA", "execution_accuracy"),
            ("F1_exe", "f1_exe"),
            ("F1_ans", "f1_ans"),
            ("EM", "em"),
            ("EMN", "emn"),
            ("ROUGE-L", "rouge_l"),
        )
        lines.append("TEXT-TO-OMOP " + "  ".join(f"{label} {t[k]:.4f}" for label, k in main))
        rs = t["rs"]
        lines.append(
            "             "
            + "  ".join(f"RS({k}) {rs[k]:.4f}" for k in _rs_keys(rs))
            + f"  (N = {t['rs_n']}; gold errors {t['gold_exec_errors']}, "
            f"prediction errors {t['pred_exec_errors']})"
        )
    alt = summary.get("alternative_golds")
    if alt:
        lines.append(
            f"Alternatives {alt['correct_by_alternative']} right answer(s) matched an alternative "
            f"gold, {alt['correct_by_gold']} the gold ({alt['instances']} instances with "
            "alternatives)"
        )
    f1 = summary.get("soft_f1")
    if f1:
        lines.append(
            f"Soft F1      {_score(f1['value'])}  (BIRD mini-dev, {f1['instances']} instances)"
        )
    e = summary.get("efficiency")
    if e:
        lines.append(
            f"{e['label']:<12} {_score(e['score'])}  ({_runs_text(e)}; {e['n_measured']} right "
            f"answers measured, {e['n_failed']} failed, of {e['n']})"
        )
    return lines


def markdown_sections(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """report.md's sections for the runs (priors excluded) that carry these scores."""
    models = [s for s in runs if not s.get("prior")]
    lines: list[str] = []
    with_t2o = [s for s in models if s.get("text2omop")]
    if with_t2o:
        lines += _text2omop_section(with_t2o)
    with_alt = [s for s in models if s.get("alternative_golds")]
    if with_alt:
        rows = [
            [
                _name(s, i),
                str(s["alternative_golds"]["instances"]),
                str(s["alternative_golds"]["correct_by_gold"]),
                str(s["alternative_golds"]["correct_by_alternative"]),
            ]
            for i, s in enumerate(with_alt)
        ]
        header = [
            "run",
            "instances with alternatives",
            "right by the gold",
            "right by an alternative",
        ]
        lines += ["## Alternative golds", "", *_table(header, rows), ""]
        lines += ["Each instance's `matched_gold` in results.jsonl names the gold it matched.", ""]
    with_f1 = [s for s in models if s.get("soft_f1")]
    if with_f1:
        lines += _soft_f1_section(with_f1)
    with_eff = [s for s in models if s.get("efficiency")]
    if with_eff:
        lines += _efficiency_section(with_eff)
    return lines


def _name(summary: Mapping[str, Any], index: int) -> str:
    return str(summary.get("run") or f"run {index + 1}")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _text2omop_section(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    metrics = [r["text2omop"] for r in runs]
    rs_keys = _rs_keys(metrics[0]["rs"])
    rows = [[label, *(f"{m[key]:.4f}" for m in metrics)] for label, key in TEXT2OMOP_ROWS]
    for k in rs_keys:
        label = f"RS({k})" if k != "N" else "RS(N)"
        rows.append([label, *(f"{m['rs'][k]:.4f}" for m in metrics)])
    counts = (
        ("Examples", "n_examples"),
        ("RS items (N)", "rs_n"),
        ("Gold execution errors", "gold_exec_errors"),
        ("Prediction execution errors", "pred_exec_errors"),
    )
    rows += [[label, *(str(m[key]) for m in metrics)] for label, key in counts]
    header = ["TEXT-TO-OMOP metric", *(_name(r, i) for i, r in enumerate(runs))]
    return [
        "## TEXT-TO-OMOP metrics",
        "",
        *_table(header, rows),
        "",
        "As TEXT-TO-OMOP's evaluator computes them (red1dwarf/TEXT-TO-OMOP f5c858f): EM, "
        "EMN and ROUGE-L over answerable items; F1_ans over every item; execution accuracy "
        "and F1_exe over answerable items whose gold runs (declined ones included, a "
        "prediction that fails counted wrong); RS(c) on its own scale (+1, 0, -c; not x100) "
        "over unanswerable items and answerable ones whose gold runs.",
        "",
    ]


def _soft_f1_section(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = [
        [_name(s, i), _score(s["soft_f1"]["value"]), str(s["soft_f1"]["instances"])]
        for i, s in enumerate(runs)
    ]
    return [
        "## Soft F1",
        "",
        *_table(["run", "soft F1", "instances"], rows),
        "",
        "BIRD mini-dev's soft F1 (evaluation_f1.py): partial credit over cells, duplicate "
        "rows dropped and rows paired by position; 100 x the mean over answerable instances, "
        "an answer without a result counting 0.",
        "",
    ]


def _efficiency_section(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = []
    for i, s in enumerate(runs):
        e = s["efficiency"]
        rows.append(
            [
                _name(s, i),
                e["label"],
                _score(e["score"]),
                _runs_text(e),
                f"{e['n_measured']} / {e['n_correct']}",
                str(e["n"]),
                _score(e["ratio_median"], 3),
                f"{_score(e['ratio_min'], 3)} – {_score(e['ratio_max'], 3)}",
            ]
        )
    header = ["run", "measure", "score", "measured with", "right answers measured", "n"]
    header += ["median ratio", "ratio range"]
    return [
        "## Efficiency",
        "",
        *_table(header, rows),
        "",
        "BIRD's valid efficiency score: 100 x the mean over answerable instances of each "
        "right answer's reward (0 for a wrong one, or for a right one that could not be "
        "measured), the reward being the square root of gold time / prediction time "
        "(VES, unbounded), of that ratio bucketed to 1.25 / 1 / 0.75 / 0.5 / 0.25 (R-VES), "
        "or of the ratio of EXPLAIN cost estimates. Timings vary from run to run on a "
        "shared machine; cost estimates do not.",
        "",
    ]
