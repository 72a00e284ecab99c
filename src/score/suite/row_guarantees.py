"""What the rows of a SELECT guarantee on a CDM that keeps its own constraints.

Two facts, read off sqlglot's tree and the CDM's definition, never off data:

* **never NULL**: a column that is, through CTEs and derived tables, a required column of a
  CDM table that is not on the nullable side of an outer join;
* **unique keys**: sets of columns no two rows share: a table's primary key (the
  vocabulary's composite ones too), an observation period's person where only periods
  that hold one day are kept (a person's periods never overlap), the keys of a GROUP BY,
  a DISTINCT, a ROW_NUMBER() with its partition, a single aggregate row; carried through
  a join that matches at most one row (its condition covers a unique key of the other
  side), through CTEs and derived tables, and narrowed by a WHERE that fixes a column to
  a constant (``rn = 1``).

Conservative throughout: a SELECT * , a RIGHT or FULL join, a set operation or anything
else not seen whole gives no guarantee.  :mod:`score.suite.equivalence` uses both to name
edits that cannot change a result.

>>> from sqlglot import parse_one
>>> q = parse_one("WITH r AS (SELECT person_id, ROW_NUMBER() OVER (PARTITION BY person_id "
...               "ORDER BY drug_exposure_start_date) AS rn FROM cdm.drug_exposure) "
...               "SELECT person_id FROM r WHERE rn = 1")
>>> output_keys(q)
[frozenset({'person_id'})]
"""

from __future__ import annotations

from itertools import product

from sqlglot import exp

from score.cdm.schema import CDM_COLUMN_TYPES, CDM_REQUIRED
from score.suite.key_labels import label_parts
from score.suite.period_day import holds_one_day

#: a column of one of a SELECT's sources: (alias, column name)
Ref = tuple[str, str]
Key = frozenset[Ref]
#: unique keys the CDM's ``<table>_id`` naming does not show: the vocabulary's primary
#: keys.  Not ``death.person_id``: CDM 5.4's conventions give a person up to one DEATH
#: record, but its DDL declares no key on DEATH (5.3's declared ``xpk_death`` on
#: person_id, 5.4 dropped it) and CDMs in use hold several per person (All of Us keeps
#: every death record), so a rule of the suite may not lean on it
_COMPOSITE_KEYS = {
    "concept_ancestor": ("ancestor_concept_id", "descendant_concept_id"),
    "concept_relationship": ("concept_id_1", "concept_id_2", "relationship_id"),
    "concept": ("concept_id",),
    "vocabulary": ("vocabulary_id",),
    "domain": ("domain_id",),
    "concept_class": ("concept_class_id",),
    "relationship": ("relationship_id",),
}
#: at most this many keys are followed per SELECT (joins multiply them)
_MAX_KEYS = 16
_DEPTH = 12

Source = tuple["str | exp.Select", bool]  # (CDM table or derived SELECT, nullable side)


def table_keys(table: str) -> list[tuple[str, ...]]:
    """A CDM table's unique keys (its primary key as the CDM's DDL declares it).

    >>> table_keys("person"), table_keys("concept_ancestor"), table_keys("death")
    ([('person_id',)], [('ancestor_concept_id', 'descendant_concept_id')], [])
    """
    if table in _COMPOSITE_KEYS:
        return [_COMPOSITE_KEYS[table]]
    name = f"{table}_id"
    return [(name,)] if name in CDM_REQUIRED.get(table, {}) else []


def _cte(select: exp.Expr, name: str) -> exp.Select | None:
    """The body of the CTE ``name`` visible from ``select``, if it is a plain SELECT."""
    node: exp.Expr | None = select
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
        if isinstance(with_, exp.With):
            for cte in with_.expressions:
                if cte.alias == name:
                    return cte.this if isinstance(cte.this, exp.Select) else None
        node = node.parent
    return None


def sources(select: exp.Select) -> dict[str, Source] | None:
    """alias -> (CDM table name or derived SELECT, on the nullable side of an outer join)
    for the FROM and JOINs of ``select``; None if any is something else or the FROM's
    rows may be on a nullable side."""
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    joins = select.args.get("joins") or []
    if any((j.side or "").upper() in ("RIGHT", "FULL") for j in joins):
        return None
    found: dict[str, Source] = {}
    for src, join in [(from_.this, None), *((j.this, j) for j in joins)]:
        nullable = join is not None and (join.side or "").upper() == "LEFT"
        if isinstance(src, exp.Table) and not src.args.get("db") and _cte(select, src.name):
            found[src.alias_or_name] = (_cte(select, src.name), nullable)  # type: ignore[assignment]
        elif isinstance(src, exp.Table) and src.name in CDM_REQUIRED:
            found[src.alias_or_name] = (src.name, nullable)
        elif isinstance(src, exp.Subquery) and isinstance(src.this, exp.Select) and src.alias:
            found[src.alias] = (src.this, nullable)
        else:
            return None
    return found


def column_names(source: str | exp.Select) -> set[str] | None:
    """The columns a source offers (None: not known, a SELECT *)."""
    if isinstance(source, str):
        return set(CDM_REQUIRED[source])
    if any(
        isinstance(e, exp.Star) or isinstance(e.unalias(), exp.Star) for e in source.expressions
    ):
        return None
    return {e.alias_or_name for e in source.expressions}


def owner(column: exp.Column, found: dict[str, Source]) -> str | None:
    """The alias of the source ``column`` reads, or None if unknown or ambiguous."""
    if column.table:
        return column.table if column.table in found else None
    having = []
    for alias, (source, _) in found.items():
        names = column_names(source)
        if names is None:
            return None
        if column.name in names:
            having.append(alias)
    return having[0] if len(having) == 1 else None


def never_null(select: exp.Select, column: exp.Column, depth: int = 0) -> bool:
    """Whether ``column`` (read in ``select``) is never NULL: a required CDM column, or a
    derived one that is, on no nullable side of an outer join."""
    found = sources(select)
    alias = owner(column, found) if found else None
    if found is None or alias is None or depth > _DEPTH:
        return False
    source, nullable = found[alias]
    if nullable:
        return False
    if isinstance(source, str):
        return CDM_REQUIRED[source].get(column.name, False)
    inner = _projection(source, column.name)
    return isinstance(inner, exp.Column) and never_null(source, inner, depth + 1)


def base_column(select: exp.Select, column: exp.Column, depth: int = 0) -> tuple[str, str] | None:
    """(CDM table, column) that ``column`` copies, through plain projections of CTEs and
    derived tables; None if it is computed or unknown."""
    found = sources(select)
    alias = owner(column, found) if found else None
    if found is None or alias is None or depth > _DEPTH:
        return None
    source, _ = found[alias]
    if isinstance(source, str):
        return (source, column.name) if column.name in CDM_REQUIRED[source] else None
    inner = _projection(source, column.name)
    return base_column(source, inner, depth + 1) if isinstance(inner, exp.Column) else None


def _projection(select: exp.Select, name: str) -> exp.Expr | None:
    hits = [e.unalias() for e in select.expressions if e.alias_or_name == name]
    return hits[0] if len(hits) == 1 else None


def conjuncts(node: exp.Expr | None) -> list[exp.Expr]:
    """The AND-ed parts of a condition (parentheses looked through)."""
    if node is None:
        return []
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    if isinstance(node, exp.Paren):
        return conjuncts(node.this)
    return [node]


def _ref(node: exp.Expr, found: dict[str, Source]) -> Ref | None:
    if not isinstance(node, exp.Column):
        return None
    alias = owner(node, found)
    return (alias, node.name) if alias else None


def _facts(
    conditions: list[exp.Expr], found: dict[str, Source]
) -> tuple[set[Ref], list[tuple[Ref, Ref]]]:
    """The columns fixed to a constant, and the pairs of columns equal, by ``conditions``."""
    fixed: set[Ref] = set()
    equal: list[tuple[Ref, Ref]] = []
    for c in conditions:
        if not isinstance(c, exp.EQ):
            continue
        a, b = _ref(c.this, found), _ref(c.expression, found)
        if a and b:
            equal.append((a, b))
        elif a and isinstance(c.expression, exp.Literal):
            fixed.add(a)
        elif b and isinstance(c.this, exp.Literal):
            fixed.add(b)
    return fixed, equal


def equal_where_set(select: exp.Select, ref: Ref) -> set[Ref]:
    """Columns of ``select``'s sources equal to ``ref`` on every row where ``ref`` is not
    NULL: by a WHERE conjunct or an inner join's condition, or by the condition of the
    LEFT JOIN that brings ``ref``'s own table (its rows without a match have ``ref``
    NULL).

    >>> from sqlglot import parse_one
    >>> q = parse_one("SELECT COUNT(d.person_id) FROM cdm.person p "
    ...               "LEFT JOIN cdm.death d ON d.person_id = p.person_id")
    >>> equal_where_set(q, ("d", "person_id"))
    {('p', 'person_id')}
    >>> equal_where_set(q, ("p", "person_id"))  # a person without death has no match
    set()
    """
    found = sources(select)
    if found is None:
        return set()
    _, equal = _facts(_holding(select, ref[0]), found)
    return {b for a, b in equal if a == ref} | {a for a, b in equal if b == ref}


def _holding(select: exp.Select, alias: str) -> list[exp.Expr]:
    """The conditions that hold on every row of ``select`` where ``alias`` found a row:
    its WHERE's conjuncts, those of every inner join's condition, and those of the
    condition of the LEFT JOIN that brings ``alias`` itself."""
    where = select.args.get("where")
    conditions = conjuncts(where.this if where is not None else None)
    for join in select.args.get("joins") or []:
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        if (not side and kind in ("", "INNER")) or (
            side == "LEFT" and join.this.alias_or_name == alias
        ):
            conditions += conjuncts(join.args.get("on"))
    return conditions


def _source_keys(alias: str, source: str | exp.Select, depth: int) -> list[Key]:
    if isinstance(source, str):
        return [frozenset((alias, c) for c in key) for key in table_keys(source)]
    return [frozenset((alias, c) for c in key) for key in output_keys(source, depth=depth + 1)]


def _covers(key: Key, alias: str, on: list[exp.Expr], found: dict[str, Source]) -> bool:
    """Whether the join condition ``on`` fixes every column of ``key`` (of ``alias``) to a
    constant or to a column of another source: each row meets at most one of its rows."""
    fixed, equal = _facts(on, found)
    bound = fixed | {a for a, b in equal if b[0] != alias} | {b for a, b in equal if a[0] != alias}
    return all(ref in bound for ref in key)


def _met_by(key: Key, alias: str, on: list[exp.Expr], found: dict[str, Source]) -> bool:
    """Whether the join condition ``on`` fixes every column of ``key`` (of the rows so
    far) to a constant or to a column of the joined ``alias``."""
    fixed, equal = _facts(on, found)
    bound = fixed | {a for a, b in equal if b[0] == alias} | {b for a, b in equal if a[0] == alias}
    return all(ref in bound for ref in key)


def row_keys(select: exp.Select, depth: int = 0) -> list[Key]:
    """Unique keys of the rows ``select`` reads (its FROM and JOINs, after WHERE), as
    sets of source columns; [] if none is known."""
    found = sources(select)
    if found is None or depth > _DEPTH:
        return []
    from_ = select.args["from_"].this
    first = from_.alias_or_name
    periods = _one_period_each(select, found)
    keys = _source_keys(first, found[first][0], depth) + periods.get(first, [])
    inner_on: list[exp.Expr] = []
    for join in select.args.get("joins") or []:
        alias = join.this.alias_or_name
        if alias not in found:
            return []
        theirs = _source_keys(alias, found[alias][0], depth) + periods.get(alias, [])
        on = conjuncts(join.args.get("on"))
        if join.args.get("using"):
            return []
        merged = [a | b for a, b in product(keys, theirs)]
        if any(_covers(k, alias, on, found) for k in theirs):
            merged += keys  # each row meets at most one joined row
        left = (join.side or "").upper() == "LEFT"
        if not left:
            inner_on += on
            if any(_met_by(k, alias, on, found) for k in keys):
                merged += theirs  # each joined row meets at most one row
        keys = sorted(set(merged), key=lambda k: (len(k), sorted(k)))[:_MAX_KEYS]
    where = select.args.get("where")
    fixed, _ = _facts(conjuncts(where.this if where else None) + inner_on, found)
    return sorted({frozenset(k - fixed) for k in keys}, key=lambda k: (len(k), sorted(k)))


def _one_period_each(select: exp.Select, found: dict[str, Source]) -> dict[str, list[Key]]:
    """Alias -> ``[{person_id}]`` for each ``observation_period`` whose rows ``select``
    keeps only if they hold one day: ``start <= d1 AND end >= d2`` with constant days
    ``d1 <= d2`` (or ``d BETWEEN start AND end``), in the conditions that hold where it
    found a row (:func:`_holding`).  A person's observation periods never overlap (the CDM's
    convention), so at most one of them holds a day.

    >>> from sqlglot import parse_one
    >>> q = parse_one("SELECT p.person_id FROM cdm.person p JOIN cdm.observation_period op "
    ...     "ON op.person_id = p.person_id WHERE op.observation_period_start_date <= "
    ...     "'2018-01-01' AND op.observation_period_end_date >= '2018-12-31'")
    >>> _one_period_each(q, sources(q))
    {'op': [frozenset({('op', 'person_id')})]}
    """
    return {
        alias: [frozenset({(alias, "person_id")})]
        for alias, (source, _) in found.items()
        if source == "observation_period" and holds_one_day(_holding(select, alias), alias)
    }


def _one_row(select: exp.Select) -> bool:
    """An aggregate SELECT without GROUP BY: one row."""
    if select.args.get("group") is not None:
        return False
    return any(
        agg.find_ancestor(exp.Window) is None
        for e in select.expressions
        for agg in e.find_all(exp.AggFunc)
    )


def output_keys(
    select: exp.Expr, *, ignore_distinct: bool = False, depth: int = 0
) -> list[frozenset[str]]:
    """Unique keys of ``select``'s result, as sets of its output column names (an empty
    set: at most one row); [] if none is known.  ``ignore_distinct``: as if the SELECT
    had no DISTINCT (what removing it would leave)."""
    if not isinstance(select, exp.Select) or depth > _DEPTH:
        return []
    outputs = [(e.alias_or_name, e.unalias()) for e in select.expressions]
    if any(isinstance(expr, exp.Star) for _, expr in outputs):
        return []
    keys: list[frozenset[str]] = []
    distinct = select.args.get("distinct")
    if distinct is not None and not distinct.args.get("on") and not ignore_distinct:
        keys.append(frozenset(n for n, _ in outputs))
    if _one_row(select):
        keys.append(frozenset())
    group = select.args.get("group")
    found = sources(select) or {}
    by_text = {expr.sql(): name for name, expr in outputs}
    by_ref: dict[Ref, str] = {}
    for name, expr in outputs:
        ref = (_ref(expr, found) or _label_ref(select, expr, found)) if found else None
        if ref:
            by_ref.setdefault(ref, name)
    for name, expr in outputs:  # ROW_NUMBER() with its partition keys
        if isinstance(expr, exp.Window) and isinstance(expr.this, exp.RowNumber):
            parts = [by_text.get(p.sql()) for p in expr.args.get("partition_by") or []]
            if all(parts):
                keys.append(frozenset([name, *parts]))  # type: ignore[list-item]
    if group is not None:
        exprs = group.expressions
        if exprs and not any(
            isinstance(g, (exp.Rollup, exp.Cube, exp.GroupingSets)) for g in exprs
        ):
            names = [by_text.get(g.sql()) or _alias_named(g, outputs, found) for g in exprs]
            if all(names):
                keys.append(frozenset(names))  # type: ignore[arg-type]
        return _minimal(keys)
    if found:
        where = select.args.get("where")
        inner_on = [
            c
            for j in select.args.get("joins") or []
            if (j.side or "").upper() != "LEFT"
            for c in conjuncts(j.args.get("on"))
        ]
        _, equal = _facts(conjuncts(where.this if where else None) + inner_on, found)
        for key in row_keys(select, depth):
            names = [_output_of(ref, by_ref, equal) for ref in key]
            if all(names):
                keys.append(frozenset(names))  # type: ignore[arg-type]
    return _minimal(keys)


def _label_ref(select: exp.Select, expr: exp.Expr, found: dict[str, Source]) -> Ref | None:
    """The integer column a label of ``expr`` carries, if no part of it is ever NULL
    (:mod:`score.suite.key_labels`)."""
    parts = label_parts(expr)
    if parts is None:
        return None
    first, rest = parts
    base = base_column(select, first)
    if base is None or CDM_COLUMN_TYPES[base[0]].get(base[1]) != "INTEGER":
        return None
    if not all(never_null(select, c) for c in (first, *rest)):
        return None
    return _ref(first, found)


def _alias_named(
    node: exp.Expr, outputs: list[tuple[str, exp.Expr]], found: dict[str, Source]
) -> str | None:
    """``GROUP BY yr`` naming the output ``yr`` (no source has a column of that name), or
    ``GROUP BY 2`` naming the second."""
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        index = int(node.name) - 1
        return outputs[index][0] if 0 <= index < len(outputs) else None
    if not isinstance(node, exp.Column) or node.table or owner(node, found) is not None:
        return None
    if found and any(node.name in (column_names(s) or {node.name}) for s, _ in found.values()):
        return None
    return node.name if any(name == node.name for name, _ in outputs) else None


def _output_of(ref: Ref, by_ref: dict[Ref, str], equal: list[tuple[Ref, Ref]]) -> str | None:
    """The output column that is ``ref`` or a column equal to it."""
    if ref in by_ref:
        return by_ref[ref]
    for a, b in equal:
        if a == ref and b in by_ref:
            return by_ref[b]
        if b == ref and a in by_ref:
            return by_ref[a]
    return None


def _minimal(keys: list[frozenset[str]]) -> list[frozenset[str]]:
    unique = sorted(set(keys), key=lambda k: (len(k), sorted(k)))
    return [k for i, k in enumerate(unique) if not any(o < k for o in unique[:i])]
