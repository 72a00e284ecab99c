"""Near misses whose difference from their gold lives in the vocabulary alone.

Most of a suite's variants share one vocabulary (``concept``, ``concept_ancestor``, ...:
the base database's rows with the suite's local concepts) and generate only the clinical
rows; a few, the vocabulary variants (:mod:`score.suite.vocabulary_variants`), hold a
vocabulary of their own.  A neighbour is *vocabulary-bound* when its difference from its
gold lives in the shared vocabulary alone:

* it reads vocabulary tables only; or
* its one edit is a LIKE pattern on a column of a vocabulary table (``LOWER(c.concept_name)
  LIKE '%biops%'`` for ``'%biopsy%'``), and no row of that table in the shared vocabulary
  matches one pattern and not the other; or
* its edit is in a filter on one vocabulary table that selects the same rows of it
  (:func:`filter_change`).

Such a neighbour is a near miss on some other vocabulary, but on this one it selects the
very same concepts: only a vocabulary variant can kill it, and one that survives them
too is marked in the build report for a person to read.

>>> like_change("SELECT 1 FROM cdm.concept c WHERE LOWER(c.concept_name) LIKE '%biopsy%'",
...             "SELECT 1 FROM cdm.concept c WHERE LOWER(c.concept_name) LIKE '%biops%'")
('concept', 'LOWER(concept_name) LIKE $1', '%biopsy%', '%biops%')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.cdm.schema import CDM_TABLES
from score.suite.row_guarantees import Source, conjuncts, owner, sources
from score.suite.suite_file import VOCABULARY_TABLES

if TYPE_CHECKING:
    import duckdb

#: The CDM's tables a variant generates: a query that names none of them in its text is
#: parsed to see whether it reads the vocabulary only (one that does is not).
_GENERATED = tuple(sorted(set(CDM_TABLES) - set(VOCABULARY_TABLES)))


def names_vocabulary(sql: str, tables: Iterable[str] = VOCABULARY_TABLES) -> bool:
    """Whether a query's text holds the name of one of ``tables`` (vocabulary tables) as
    a word anywhere, case aside: one that does not cannot read it (an identifier is a
    word, and the guard refuses the functions that find a table by a name built at run
    time, such as ``query_table``).

    >>> names_vocabulary("SELECT gender_concept_id FROM cdm.person")
    False
    >>> names_vocabulary('SELECT 1 FROM cdm."CONCEPT_ANCESTOR"')
    True
    >>> names_vocabulary("SELECT 1 FROM cdm.concept c", ["concept_ancestor"])
    False
    """
    names = sorted(tables)
    if not names:
        return False
    pattern = r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b"
    return re.search(pattern, sql.lower()) is not None


def reads_only_vocabulary(sql: str, dialect: str | None = None) -> bool:
    """Whether a query (written for ``dialect``, default DuckDB's) reads vocabulary
    tables only: it names at least one table, and every table it names is a vocabulary
    table, unqualified or in the ``cdm`` schema (as a variant holds it).  Every variant
    returns such a query's result on the base database's own vocabulary rows.

    >>> reads_only_vocabulary("SELECT concept_name FROM cdm.concept WHERE concept_id = 1")
    True
    >>> reads_only_vocabulary("SELECT COUNT(*) FROM cdm.person")
    False
    >>> reads_only_vocabulary("SELECT 1 FROM other.concept"), reads_only_vocabulary("SELECT 1")
    (False, False)
    """
    text = sql.lower()
    if any(name in text for name in _GENERATED):
        return False
    try:
        tables = list(parse_one(sql, read=dialect or "duckdb").find_all(exp.Table))
    except SqlglotError:
        return False
    return bool(tables) and all(
        isinstance(t.this, exp.Identifier)
        and t.name.lower() in VOCABULARY_TABLES
        and not t.catalog
        and t.db.lower() in ("", "cdm")
        for t in tables
    )


def like_change(gold_sql: str, neighbour_sql: str) -> tuple[str, str, str, str] | None:
    """(vocabulary table, the test as SQL with ``$1`` for the pattern, the gold's pattern,
    the neighbour's) when the one difference of the two queries is the pattern of a LIKE
    on a column of a vocabulary table; else None."""
    try:
        gold = parse_one(gold_sql, read="duckdb")
        near = parse_one(neighbour_sql, read="duckdb")
    except SqlglotError:
        return None
    likes = list(gold.find_all(exp.Like, exp.ILike)), list(near.find_all(exp.Like, exp.ILike))
    if len(likes[0]) != len(likes[1]):
        return None
    pairs = list(zip(*likes, strict=True))
    changed = [(a, b) for a, b in pairs if a.expression.sql() != b.expression.sql()]
    if len(changed) != 1 or not all(
        isinstance(x.expression, exp.Literal) and x.expression.is_string for x in changed[0]
    ):
        return None
    node, other = changed[0]
    copy = gold.copy()
    _replace_pattern(copy, node, other.expression)
    if copy.sql(dialect="duckdb") != near.sql(dialect="duckdb"):
        return None  # something else differs too
    columns = list(node.this.find_all(exp.Column))
    select = node.find_ancestor(exp.Select)
    found = sources(select) if select is not None else None
    if not columns or not found:
        return None
    aliases = {owner(c, found) for c in columns}
    if len(aliases) != 1 or None in aliases:
        return None
    table = found[aliases.pop()][0]  # type: ignore[index]
    if not isinstance(table, str) or table not in VOCABULARY_TABLES:
        return None
    test = node.copy()
    for c in test.find_all(exp.Column):
        c.set("table", None)
    test.set("expression", exp.Placeholder(this="1"))
    text = test.sql(dialect="duckdb").replace("?", "$1").replace(":1", "$1")
    return table, text, node.expression.name, other.expression.name


def _same_rows(con: duckdb.DuckDBPyConnection, change: FilterChange) -> bool:
    """Whether the two filters of ``change`` keep the same rows of the base vocabulary."""
    import duckdb

    from score.cdm.duckdb_file import quote

    table, alias, gold, near = change
    try:
        differ = con.execute(
            f"SELECT count(*) FROM {quote(table)} AS {quote(alias)} "
            f"WHERE coalesce(({gold}), false) <> coalesce(({near}), false)"
        ).fetchall()[0][0]
    except duckdb.Error:
        return False
    return differ == 0


def _replace_pattern(tree: exp.Expr, node: exp.Expr, pattern: exp.Expr) -> None:
    for candidate in tree.find_all(type(node)):
        if candidate == node:
            candidate.set("expression", pattern.copy())
            return


def vocabulary_bound(
    base_db: str | Path,
    schema: str | None,
    pairs: list[tuple[str, str]],
    vocabulary: Mapping[str, pa.Table] | None = None,
) -> list[bool]:
    """For each (gold, neighbour), whether the neighbour is vocabulary-bound on the
    vocabulary the variants share: ``vocabulary`` (the base database's tables with the
    suite's local concepts) where given, else the base database's own (see the module's
    docstring)."""
    out = [reads_only_vocabulary(n) for _, n in pairs]
    changes = {i: like_change(g, n) for i, (g, n) in enumerate(pairs) if not out[i]}
    filters = {i: filter_change(*pairs[i]) for i, c in changes.items() if c is None}
    if not any(changes.values()) and not any(filters.values()):
        return out
    # imported here: scoring imports this module for its pure checks, and a run on
    # PostgreSQL never needs DuckDB in the scoring process (40 ms of its start)
    import duckdb

    from score.cdm.duckdb_file import quote, use_cdm_schema

    con = duckdb.connect(":memory:" if vocabulary else str(base_db), read_only=not vocabulary)
    try:
        if vocabulary:
            for name, table in vocabulary.items():
                con.register(name, table)
        else:
            use_cdm_schema(con, schema)
        for i, change in changes.items():
            if change is None:
                continue
            table, test, pattern, altered = change
            one, two = test.replace("$1", "$p"), test.replace("$1", "$q")
            try:
                differ = con.execute(
                    f"SELECT count(*) FROM {quote(table)} WHERE ({one}) IS DISTINCT FROM ({two})",
                    {"p": pattern, "q": altered},
                ).fetchall()[0][0]
            except duckdb.Error:
                continue
            out[i] = differ == 0
        for i, found in filters.items():
            if found is not None:
                out[i] = _same_rows(con, found)
    finally:
        con.close()
    return out


#: A vocabulary table's filter, as a gold and its neighbour write it:
#: (table, alias, the gold's filter, the neighbour's filter), each SQL over ``alias``.
FilterChange = tuple[str, str, str, str]


def filter_change(gold_sql: str, neighbour_sql: str) -> FilterChange | None:
    """The filter on one vocabulary table that is all a neighbour changed, else None.

    The two queries must differ inside one SELECT only, and there only in the
    conditions that read one vocabulary table alone: its WHERE conjuncts (the table on
    no nullable side; an inner join's ON counts as WHERE) or the ON conjuncts of its own
    LEFT JOIN.  Those conditions only choose which of the table's rows the rest of the
    query sees, so if they choose the same rows of the base vocabulary, which every
    variant keeps, no variant can tell the two apart.

    >>> query = ("SELECT COUNT(*) FROM cdm.drug_exposure d JOIN cdm.concept c "
    ...          "ON c.concept_id = d.drug_concept_id WHERE {}c.concept_class_id = 'Clinical Drug'")
    >>> table, alias, gold, near = filter_change(
    ...     query.format("c.vocabulary_id = 'RxNorm' AND "), query.format(""))
    >>> print(table, alias, gold, near, sep="\\n")
    concept
    c
    (c.concept_class_id = 'Clinical Drug') AND (c.vocabulary_id = 'RxNorm')
    (c.concept_class_id = 'Clinical Drug')
    """
    try:
        gold = parse_one(gold_sql, read="duckdb")
        near = parse_one(neighbour_sql, read="duckdb")
    except SqlglotError:
        return None
    pair = _first_difference(gold, near)
    if pair is None:
        return None
    steps, node = 0, pair[0]  # type: int, exp.Expr | None
    while node is not None and not isinstance(node, exp.Select):
        node, steps = node.parent, steps + 1
    other: exp.Expr | None = pair[1] if pair[1] is not None else pair[2]
    for _ in range(steps if pair[1] is not None else steps - 1):
        other = other.parent if other is not None else None
    if not isinstance(node, exp.Select) or not isinstance(other, exp.Select):
        return None
    if _without_filters(node) != _without_filters(other):
        return None
    found = sources(node)
    mine, theirs = _filters(node, found), _filters(other, found)
    if found is None or mine is None or theirs is None:
        return None
    changed = [k for k in mine.keys() | theirs.keys() if mine.get(k, []) != theirs.get(k, [])]
    if len(changed) != 1 or changed[0][1] is None:
        return None
    alias = changed[0][1]
    table = found[alias][0]
    if not isinstance(table, str) or table not in VOCABULARY_TABLES:
        return None
    both = [
        " AND ".join(f"({c})" for c in side.get(changed[0], [])) or "TRUE"
        for side in (mine, theirs)
    ]
    return table, alias, both[0], both[1]


def _first_difference(
    a: exp.Expr, b: exp.Expr
) -> tuple[exp.Expr, exp.Expr | None, exp.Expr] | None:
    """(the smallest subtree of ``a`` where ``b`` differs, its counterpart in ``b`` or None
    if ``b`` has nothing there, the node of ``b`` that holds that place) by walking both
    trees together; None if they are the same."""
    if a == b:
        return None
    if type(a) is not type(b):
        return (a, b, b)
    diffs: list[tuple[object, object]] = []
    for key in a.args.keys() | b.args.keys():
        x, y = a.args.get(key), b.args.get(key)
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            diffs += [(p, q) for p, q in zip(x, y, strict=True) if p != q]
        elif x != y:
            diffs.append((x, y))
    if len(diffs) != 1:
        return (a, b, b)
    x, y = diffs[0]
    if isinstance(x, exp.Expr) and isinstance(y, exp.Expr):
        return _first_difference(x, y)
    if isinstance(x, exp.Expr) and y is None:
        return (x, None, b)
    return (a, b, b)


def _without_filters(select: exp.Select) -> str:
    """``select`` with its WHERE and its joins' ON conditions left out."""
    copy = select.copy()
    copy.set("where", None)
    for join in copy.args.get("joins") or []:
        join.set("on", None)
    return copy.sql(dialect="duckdb")


def _filters(
    select: exp.Select, found: dict[str, Source] | None
) -> dict[tuple[str, str | None], list[str]] | None:
    """The conditions of ``select`` by (where they are, the one alias they read, None for
    any other): the WHERE with inner joins' ONs, and each LEFT JOIN's ON."""
    if found is None:
        return None
    places: list[tuple[str, exp.Expr | None, str | None]] = [
        ("where", select.args["where"].this if select.args.get("where") else None, None)
    ]
    for i, join in enumerate(select.args.get("joins") or []):
        side = (join.side or "").upper()
        own = join.this.alias_or_name if isinstance(join.this, exp.Table | exp.Subquery) else None
        places.append(
            ("where", join.args.get("on"), None)
            if not side
            else (f"on{i}", join.args.get("on"), own)
        )
    out: dict[tuple[str, str | None], list[str]] = {}
    for place, condition, own in places:
        for part in conjuncts(condition):
            alias = _one_alias(part, found)
            if alias is not None and place == "where" and found[alias][1]:
                alias = None  # a WHERE on a nullable side: not the table's own filter
            if alias is not None and own is not None and alias != own:
                alias = None  # a LEFT JOIN's ON on the preserved side
            out.setdefault((place, alias), []).append(part.sql(dialect="duckdb"))
    return {k: sorted(v) for k, v in out.items()}


def _one_alias(condition: exp.Expr, found: dict[str, Source]) -> str | None:
    """The one source a condition reads, if it reads one and holds no query, aggregate
    or window."""
    if condition.find(exp.Select, exp.Subquery, exp.AggFunc, exp.Window):
        return None
    aliases = {owner(c, found) for c in condition.find_all(exp.Column)}
    if len(aliases) != 1 or None in aliases:
        return None
    return aliases.pop()
