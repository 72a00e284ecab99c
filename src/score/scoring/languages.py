"""Which question languages a run scores, and the ones it leaves unanswered.

A task set may ask each question in several languages (the project's asks 174 of its
277 in Korean too); each language of a question is an instance of its own, so a run
that answers only the English questions would count every Korean one as ``missing``
and report a score the model never had a chance at.  Scoring a subset is a choice
(``score run --language en``) that the summary and the report state; a language left
without a single prediction in a run that scores it is said on stderr and in the
report.

>>> tasks = [{"questions": {"en": "?", "ko": "?"}}, {"questions": {"en": "?"}}]
>>> languages_scored(tasks, None), languages_scored(tasks, ("en",))
(('en', 'ko'), ('en',))
>>> unanswered(tasks, ("en", "ko"), {("t1", "en")})
{'ko': 1}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from score.errors import InputError
from score.inputs.task_set import instances, task_languages


def languages_scored(
    tasks: Sequence[dict[str, Any]], chosen: Collection[str] | None
) -> tuple[str, ...]:
    """The languages a run scores: ``chosen`` (each must be a language of the task set),
    else every language of the task set."""
    present = task_languages(tasks)
    if chosen is None:
        return tuple(present)
    unknown = sorted(set(chosen) - set(present))
    if unknown:
        raise InputError(
            f"--language {', '.join(unknown)}: the task set asks its questions in "
            f"{', '.join(present)}",
            stage="score",
        )
    return tuple(sorted(set(chosen)))


def unanswered(
    tasks: Sequence[dict[str, Any]],
    scored: Collection[str],
    answered: Collection[tuple[str, str]],
) -> dict[str, int]:
    """Scored languages with no prediction at all (instance keys ``answered``), and how
    many instances each has."""
    asked = Counter(i.language for i in instances(tasks, scored))
    answered_languages = {language for _, language in answered}
    return {lang: n for lang, n in sorted(asked.items()) if lang not in answered_languages}


def language_summary(
    tasks: Sequence[dict[str, Any]],
    scored: Sequence[str],
    chosen: bool,
    answered: Collection[tuple[str, str]],
) -> dict[str, Any]:
    """What the summary says of languages: those scored, those the task set has, whether
    the subset was chosen, and the scored ones no prediction answers."""
    return {
        "scored": list(scored),
        "all": task_languages(tasks),
        "chosen": chosen,
        "unanswered": unanswered(tasks, scored, answered),
    }


def language_warnings(summary: dict[str, Any]) -> list[str]:
    """One warning per scored language that no prediction answers."""
    found = []
    for lang, n in summary["unanswered"].items():
        others = [x for x in summary["scored"] if x != lang]
        flags = " ".join(f"--language {x}" for x in others)
        hint = f"; to score only {', '.join(others)}, add {flags}" if others else ""
        found.append(
            f"no prediction answers any {lang} question: its {n} instance(s) count as missing{hint}"
        )
    return found
