"""The exit codes of every ``sqlgold`` command, in one place (the README has the table).

======  ==========================================================================
code    meaning
======  ==========================================================================
0       done; whatever was checked is as expected
1       error: one line on stderr naming the stage, file, line or task; nothing
        already written was lost or half-written
2       usage error (click's own code): an unknown option, a missing argument
3       checked and found different or dropped: ``curate --strict`` dropped a record
        or met an unreadable source line; ``verify`` found the results different, the
        gold empty, a side that did not run or an unanswerable claim that does not
        hold; ``grounding --check`` found stale documents; ``db info`` found the
        data no longer matching the fingerprint ``db build`` stored; ``score run``
        found tasks whose gold result no longer matches its pinned hash (gold_drift)
======  ==========================================================================
"""

from __future__ import annotations

OK = 0
ERROR = 1
USAGE = 2
FOUND_DIFFERENT = 3
