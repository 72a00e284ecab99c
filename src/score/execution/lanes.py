"""The lanes of query processes (a kind of request each keeps to) and how many a scoring
uses, in a module that imports nothing, so a command can name them before it imports the
executor (:mod:`score.execution.processes.sandbox` says what a lane is).

>>> workers_for_scoring(2)
{'parse': 1, 'query': 3}
"""

from __future__ import annotations

#: Requests that may run queries: every request unless its class names another lane.
QUERY_LANE = "query"

#: Requests that only parse (an answer's extraction, guard and logical form): their
#: processes never run a query, so their memory stays small.
PARSE_LANE = "parse"


def workers_for_scoring(jobs: int) -> dict[str, int]:
    """The query processes a scoring uses, per lane: the parse lane's one, one per run
    lane (``jobs``) and the gold results' stream."""
    return {PARSE_LANE: 1, QUERY_LANE: max(jobs, 1) + 1}
