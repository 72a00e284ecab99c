"""sqlgold's own profile (the default): principled result equality.

Rows are a multiset (a sequence when the task's gold asks for an order); the predicted
columns must map one-to-one onto the gold's by content (names ignored) with the same
column count; values compare as what they are.  Where each peer differs:

==========================  ============================  =====================================
question                    sqlgold                       peers
==========================  ============================  =====================================
column names                ignored                       ignored by all
column order                free, one-to-one by content   TS free (permutation search); Spider2
                                                          free and not one-to-one; EHRSQL,
                                                          BIRD/set: must match
column count                equal (with condition_cols:   Spider2: extra predicted columns
                            the prediction needs one      allowed; others equal
                            distinct column per listed
                            gold column, others ignored)
row order                   ignored unless order_matters  same in TS, SNUH; Spider2 sorts each
                                                          column on its own; EHRSQL, BIRD: never
duplicate rows              count                         BIRD/set: ignored (set equality)
rows compared               all                           EHRSQL: first 100 after sorting
numbers                     |a-b| <= 1e-9 + 1e-6*max(|a|, TS, BIRD: exact; Spider2: abs 0.01;
                            |b|) (``tolerance``);         EHRSQL, SNUH: 3 decimals;
                            integer vs integer exact      HealthLLM: rel sqrt(eps)
int / float / DECIMAL       compared as numbers (DECIMAL  TS, BIRD: DECIMAL vs float compares
                            and FLOAT as doubles), so     the binary value (1.10 != 1.1)
                            1 = 1.0 and 1.10 = 1.1
infinities                  equal only to themselves      the same everywhere
NULL                        its own value: NULL = NULL,   Spider2: NULL = NaN = 0 = '' = 'NA';
                            NULL != 0, NULL != ''         EHRSQL: NULL = 'None'
NaN                         NaN = NaN, NaN != NULL        TS, BIRD: NaN != NaN; Spider2: NaN = 0;
                                                          EHRSQL: NaN = NaN (as 'nan')
strings                     exact, case-sensitive         Spider2, EHRSQL: numeric text = number
'1' vs 1                    different                     Spider2, EHRSQL: equal
booleans                    own type: TRUE != 1           every peer: TRUE = 1 (Python, Julia)
DATE vs '2020-01-01'        different                     Spider2, EHRSQL: equal (as text)
DATE vs midnight TIMESTAMP  equal (SQL casts the DATE)    TS, EHRSQL, BIRD, SNUH: different
TIMESTAMPTZ                 an instant; a naive TIMESTAMP TS/BIRD: aware != naive (Python)
                            is read as UTC
LIST / STRUCT / MAP         by structure, numbers as      TS, BIRD: crash (unhashable);
                            numbers                       Spider2, EHRSQL: as text
both results empty          equal if the column counts    equal in every peer
                            are equal (types unseen)
several gold answers        match if any matches          Spider2 the same
==========================  ============================  =====================================

Why: NULL, booleans, dates and strings are SQL values with their own types, and a
prediction that returns the text '1' or a 0 for a NULL has answered differently; numbers
come from floating-point aggregation in different orders and engines, so they get a
relative tolerance tight enough (1e-6) that a wrong rounding (9.999 vs 10.0) still
fails.  A DATE equals its midnight TIMESTAMP because DuckDB itself says so
(``DATE '2020-01-01' = TIMESTAMP '2020-01-01'`` is true).

>>> from score.execution.result import QueryResult
>>> g = QueryResult.from_rows(["n"], [(None,)], ["INTEGER"])
>>> compare_sqlgold(g, QueryResult.from_rows(["n"], [(0,)]), Flags()).match
False
"""

from __future__ import annotations

from score.comparison.profiles.base import Flags, Verdict, check_condition_cols
from score.comparison.profiles.bijective import compare_bijective
from score.comparison.profiles.column_checks import Engine
from score.comparison.values import Rules, Tolerance
from score.execution.result import QueryResult

RULES = Rules(bool_is_number=False, date_is_timestamp=True, nan_equals_nan=True)
DEFAULT_TOLERANCE = Tolerance(rel=1e-6, abs=1e-9)


def compare_sqlgold(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """sqlgold's verdict (see the module table)."""
    condition_cols = check_condition_cols(flags, gold.num_columns)
    if identical(gold, pred):  # what the mapping search would find, without the search
        how = "in order" if flags.order_matters else "as a multiset"
        width = gold.num_columns if condition_cols is None else len(condition_cols)
        return Verdict(True, f"same {gold.num_rows} row(s) {how} over {width} column(s)")
    engine = Engine(RULES, flags.tolerance or DEFAULT_TOLERANCE)
    return compare_bijective(
        gold,
        pred,
        engine,
        order_matters=flags.order_matters,
        condition_cols=condition_cols,
    )


def identical(gold: QueryResult, pred: QueryResult) -> bool:
    """The two results hold the same rows in the same order, column for column (the
    same DuckDB types and Arrow values; names aside): a right answer's result usually
    is its gold's, and then every column maps onto its own position.  Arrow's equality
    is exact (a NaN is not equal to itself there), so anything else is left to the
    comparison proper.

    >>> g = QueryResult.from_rows(["n", "s"], [(1, "a"), (2, None)])
    >>> identical(g, QueryResult.from_rows(["count", "label"], [(1, "a"), (2, None)]))
    True
    >>> identical(g, QueryResult.from_rows(["n", "s"], [(2, None), (1, "a")]))
    False
    >>> identical(g, QueryResult.from_rows(["n", "s"], [(1.0, "a"), (2.0, None)]))
    False
    """
    g, p = gold.table, pred.table
    if g.num_rows == 0 or g.num_rows != p.num_rows or gold.types != pred.types:
        return False
    return all(a.type == b.type and a.equals(b) for a, b in zip(g.columns, p.columns, strict=True))
