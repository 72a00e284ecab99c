"""TEXT-TO-OMOP's metrics, computed as its evaluator computes them: pure functions of items.

The definitions are those of ``EVALUATION/evaluation_protocol.py`` (``evaluate_file``) in
red1dwarf/TEXT-TO-OMOP at f5c858f (Legrand et al., ClinicalNLP 2026), reimplemented here.
An :class:`Item` is one question with its gold text (``<NO_SQL>`` when unanswerable),
the prediction's text as given, whether the gold runs on the database, and sqlgold's
outcome of the prediction.  The gold text decides whether a question is answerable, the
prediction's text whether the model answered (anything but ``<NO_SQL>``, both stripped).

* **Text metrics, over answerable items** (the denominator is their count, or 1 when
  there are none): EM, the stripped texts equal; EMN, equal after lower-casing, one final
  ``;`` dropped and every whitespace run made one space; ROUGE-L, the F1 of the longest
  common subsequence of whitespace-separated tokens (1 when both have no token, 0 when
  one has none), the subsequence found by a bit-parallel algorithm (:func:`lcs_length`).
* **Answering** (every item): TP answerable and answered, FP unanswerable and answered,
  FN answerable and declined; precision, recall and F1_ans (0 where a denominator is 0).
* **Execution, over answerable items whose gold runs** (an item whose gold fails is
  counted in ``gold_exec_errors`` and left out of everything below, not of the text
  metrics or F1_ans): execution accuracy = correct / those items, the ones the model
  declined included; precision_exe = correct / those the model answered; recall_exe =
  execution accuracy; F1_exe.  A prediction that fails to run is wrong
  (``pred_exec_errors`` counts them).
* **RS(c)** over the unanswerable items and the answerable ones whose gold runs: +1 for
  a right answer and for declining an unanswerable question, 0 for declining an
  answerable one, -c for any other answer; the mean, for c = 0, 1, 10 and N (the number
  of items scored), on the evaluator's scale (not x100).

>>> items = [Item("SELECT 1;", "SELECT 1;", True, "correct"),
...          Item("<NO_SQL>", "SELECT 2;", False, "mismatch")]
>>> m = text2omop_metrics(items)
>>> m["em"], m["f1_ans"], m["execution_accuracy"], m["rs"]["1"]
(1.0, 0.6666666666666666, 1.0, 0.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from score.inputs.text2omop import NO_SQL

#: The penalties RS is reported with (N, the number of items scored, is added).
RS_PENALTIES: tuple[float, ...] = (0.0, 1.0, 10.0)

#: sqlgold outcomes of a prediction that ran and was judged (the others failed to run).
_JUDGED = frozenset({"correct", "mismatch"})


@dataclass(frozen=True)
class Item:
    """One question: its gold text, the prediction's text, whether the gold runs on the
    database (read for answerable items only) and sqlgold's outcome of the prediction
    (``correct`` is right; ``mismatch`` ran and was wrong; any other failed to run)."""

    gold: str
    pred: str
    gold_runs: bool
    outcome: str

    @property
    def answerable(self) -> bool:
        return self.gold.strip() != NO_SQL

    @property
    def answered(self) -> bool:
        return self.pred.strip() != NO_SQL


def exact_match(gold: str, pred: str) -> bool:
    """The stripped texts are equal."""
    return gold.strip() == pred.strip()


def normalised(sql: str) -> str:
    """Stripped, lower-cased, one final ``;`` dropped, whitespace runs made one space.

    >>> normalised("  SELECT *\\n  FROM  person ;")
    'select * from person'
    """
    text = sql.strip().lower()
    if text.endswith(";"):
        text = text[:-1]
    return re.sub(r"\s+", " ", text).strip()


def normalised_match(gold: str, pred: str) -> bool:
    return normalised(gold) == normalised(pred)


def lcs_length(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of two token lists, by the
    bit-parallel algorithm (Hyyrö 2004): one pass over ``b`` with the positions of each
    token of ``a`` as the bits of an integer, exact for any lengths.

    >>> lcs_length("A B C B D A B".split(), "B D C A B A".split())
    4
    >>> lcs_length([], ["x"]), lcs_length(["x"], ["x"])
    (0, 1)
    """
    if not a or not b:
        return 0
    positions: dict[str, int] = {}
    for i, token in enumerate(a):
        positions[token] = positions.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & positions.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def rouge_l(gold: str, pred: str) -> float:
    """F1 of the longest common subsequence of whitespace tokens (case kept), computed
    as TEXT-TO-OMOP's evaluator computes it (recall over the gold's tokens, precision
    over the prediction's, ``2rp / (r + p)``).

    >>> rouge_l("SELECT a FROM t", "SELECT b FROM t")
    0.75
    >>> rouge_l("", " "), rouge_l("SELECT 1", "")
    (1.0, 0.0)
    """
    gold_tokens, pred_tokens = gold.split(), pred.split()
    if not gold_tokens and not pred_tokens:
        return 1.0
    if not gold_tokens or not pred_tokens:
        return 0.0
    lcs = lcs_length(gold_tokens, pred_tokens)
    r = lcs / len(gold_tokens)
    p = lcs / len(pred_tokens)
    if r + p == 0:
        return 0.0
    return 2 * r * p / (r + p)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator > 0 else 0.0


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


def rs_key(c: float) -> str:
    """An RS penalty as a key: ``10.0`` -> ``"10"``.

    >>> rs_key(10.0), rs_key(0.5)
    ('10', '0.5')
    """
    return str(int(c)) if float(c).is_integer() else str(c)


def text2omop_metrics(
    items: Iterable[Item], penalties: tuple[float, ...] = RS_PENALTIES
) -> dict[str, Any]:
    """Every metric of TEXT-TO-OMOP's evaluator over ``items`` (see the module's text)."""
    items = list(items)
    answerable = [x for x in items if x.answerable]
    text_n = len(answerable) or 1
    tp = sum(1 for x in answerable if x.answered)
    fp = sum(1 for x in items if not x.answerable and x.answered)
    fn = len(answerable) - tp
    gold_errors = sum(1 for x in answerable if not x.gold_runs)
    scored = [x for x in items if not x.answerable or x.gold_runs]
    runnable = [x for x in scored if x.answerable]
    attempted = [x for x in runnable if x.answered]
    correct = sum(1 for x in attempted if x.outcome == "correct")
    pred_errors = sum(1 for x in attempted if x.outcome not in _JUDGED)
    prec_ans, rec_ans = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    accuracy = _ratio(correct, len(runnable))
    prec_exe = _ratio(correct, len(attempted))
    n = len(scored)
    rs = {rs_key(c): _rs(scored, c) for c in penalties}
    rs["N"] = _rs(scored, float(n))
    return {
        "n_examples": len(items),
        "n_answerable": len(answerable),
        "em": sum(exact_match(x.gold, x.pred) for x in answerable) / text_n,
        "emn": sum(normalised_match(x.gold, x.pred) for x in answerable) / text_n,
        "rouge_l": sum(rouge_l(x.gold, x.pred) for x in answerable) / text_n,
        "tp_ans": tp,
        "fp_ans": fp,
        "fn_ans": fn,
        "prec_ans": prec_ans,
        "rec_ans": rec_ans,
        "f1_ans": _f1(prec_ans, rec_ans),
        "actually_answerable": len(runnable),
        "predicted_answerable": len(attempted),
        "correct_exec": correct,
        "execution_accuracy": accuracy,
        "prec_exe": prec_exe,
        "rec_exe": accuracy,
        "f1_exe": _f1(prec_exe, accuracy),
        "gold_exec_errors": gold_errors,
        "pred_exec_errors": pred_errors,
        "rs": rs,
        "rs_n": n,
    }


def _rs(items: list[Item], c: float) -> float:
    """RS(c): the mean of the items' scores (0 when there is none)."""
    return sum(_rs_item(x, c) for x in items) / len(items) if items else 0.0


def _rs_item(item: Item, c: float) -> float:
    if not item.answerable:
        return -c if item.answered else 1.0
    if not item.answered:
        return 0.0
    return 1.0 if item.outcome == "correct" else -c
