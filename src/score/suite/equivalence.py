"""Edits that cannot change a result on a CDM that keeps its own constraints.

Some one-edit neighbours of a gold are not near misses but the same query in other
words, given what the OMOP CDM guarantees: a required (NOT NULL) foreign key always
finds its row, a primary key is unique.  No variant can tell such a neighbour apart (the
variants keep those constraints, as a valid CDM does), so counting it among the near
misses that survive would blame the suite for a right answer.  Each rule here names
one such case, decided on the gold's tree at the node the edit changes; a neighbour it
names is still generated, run and reported (a base database or variant that tells one
apart refutes the rule for that data, and the report says so).

Rules (each conservative: anything it cannot see whole is not claimed):

* ``fk_join_total`` (INNER <-> LEFT JOIN): the join's condition is one equality of a
  required column that references the joined table (``x_concept_id`` -> ``concept``,
  ``person_id`` -> ``person``, ...) with that table's primary key, and the referencing
  table is not itself on the nullable side of an outer join: every row finds its match.
* ``null_rejected_join`` (INNER <-> LEFT JOIN): a WHERE conjunct or another inner join's
  condition of the same SELECT compares a column of the joined table: the rows a LEFT
  JOIN would add (NULLs there) are dropped again.
* ``set_semantics`` (DISTINCT): the SELECT is an IN / EXISTS / ANY subquery or an operand
  of UNION, INTERSECT or EXCEPT (without ALL): duplicates cannot change what it gives.
* ``unique_rows`` (DISTINCT): the rows are distinct already: the SELECT selects a unique
  key of its rows (:func:`score.suite.row_guarantees.output_keys`: a primary key, the
  GROUP BY keys, a ROW_NUMBER() with its partition, carried through CTEs, derived
  tables and joins that match at most one row).
* ``unique_count`` (COUNT <-> COUNT(DISTINCT)): the column counted is by itself a unique
  key of the rows its SELECT reads, or equal to one wherever it is not NULL (``p.person_id``
  of a person joined to the one observation period that holds a day; never a death's
  ``person_id``: DEATH declares no key, and a CDM may hold several deaths of a person),
  or a key of the rows
  where the LEFT JOIN that brings it found a match, the only rows COUNT counts
  (``COUNT(c.concept_id)`` of ``domain d LEFT JOIN concept c ON c.domain_id = d.domain_id``).
* ``count_required`` (a column swapped inside ``COUNT``): both columns are required in a
  table that is not the nullable side of an outer join: each counts every row.
* ``null_test_required`` (a column swapped inside ``IS NULL``): both are required columns
  of one CDM table: either is NULL exactly when an outer join found no row.
* ``unused_output`` (a column swapped inside a projection of a CTE or derived table): no
  query that reads it uses that output column (a bare column's output is named after
  it, and after the column swapped in once swapped: neither name is read), so the rows
  it gives are the same.
* ``null_ignored`` (a WHERE or a part of it dropped, or its column swapped for a required
  one): it held only ``x IS NOT NULL`` tests of a one-row aggregate SELECT whose every
  aggregate skips the rows where ``x`` is NULL; ``null_test_implied`` (the same edits of
  ``x IS NOT NULL`` where another part of the WHERE compares ``x``, which a NULL fails
  already): :mod:`score.suite.null_filters`.
* ``ties_unseen`` (a window's last ORDER BY key swapped or flipped): the rows it orders
  among ties look alike in every output of the window's SELECT
  (:mod:`score.suite.window_ties`).

>>> from sqlglot import parse_one, exp
>>> gold = parse_one("SELECT c.concept_name FROM cdm.person p JOIN cdm.concept c "
...                  "ON c.concept_id = p.gender_concept_id")
>>> rule("join_side", gold.find(exp.Join))
'fk_join_total'
>>> rule("join_side", parse_one("SELECT * FROM cdm.person p JOIN cdm.location l "
...      "ON l.location_id = p.location_id").find(exp.Join)) is None  # location_id may be NULL
True
"""

from __future__ import annotations

from sqlglot import exp

from score.cdm.schema import CDM_REQUIRED
from score.suite.null_filters import null_filter_rule
from score.suite.row_guarantees import (
    base_column,
    column_names,
    conjuncts,
    equal_where_set,
    never_null,
    output_keys,
    owner,
    row_keys,
    sources,
)
from score.suite.window_ties import unseen_tie_key

_COMPARISONS = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Like,
    exp.ILike,
    exp.In,
    exp.Between,
)


def primary_key(table: str) -> str | None:
    """A CDM table's primary key by the CDM's naming (``<table>_id``), if it has one.

    >>> primary_key("condition_occurrence"), primary_key("concept_ancestor")
    ('condition_occurrence_id', None)
    """
    name = f"{table}_id"
    return name if name in CDM_REQUIRED.get(table, {}) else None


#: The CDM's foreign keys to ``concept`` that its naming (``*_concept_id``) does not show.
_CONCEPT_KEYS = {
    ("concept_relationship", "concept_id_1"),
    ("concept_relationship", "concept_id_2"),
    ("concept_synonym", "concept_id"),
}


def references(source: str, column: str, table: str) -> bool:
    """Whether ``source.column`` is a foreign key to ``table`` (by the CDM's naming, or
    one of the vocabulary's keys to ``concept``).

    >>> references("person", "race_concept_id", "concept")
    True
    >>> references("visit_occurrence", "person_id", "person")
    True
    >>> references("concept_relationship", "concept_id_2", "concept")
    True
    """
    if table == "concept":
        return column.endswith("_concept_id") or (source, column) in _CONCEPT_KEYS
    return column == primary_key(table)


def rule(edit: str, node: exp.Expr, edited: exp.Expr | None = None) -> str | None:
    """The rule under which ``edit`` at ``node`` (of the gold's tree; ``edited``: the
    same node in the neighbour's tree, where the edit changed it in place) cannot
    change the result on a CDM that keeps its constraints, or None."""
    if edit == "column_swap" and isinstance(node, exp.Column) and isinstance(edited, exp.Column):
        if _counts_required(node, edited.name):
            return "count_required"
        if _null_test_required(node, edited.name):
            return "null_test_required"
        if _unused_output(node, edited.name):
            return "unused_output"
        if isinstance(node.parent, exp.Ordered) and unseen_tie_key(node.parent):
            return "ties_unseen"
        if named := null_filter_rule(edit, node, edited):
            return named
    elif edit in ("drop_where", "drop_conjunct"):
        return null_filter_rule(edit, node, edited)
    elif edit == "order_flip" and isinstance(node, exp.Ordered):
        if unseen_tie_key(node):
            return "ties_unseen"
    elif edit == "join_side" and isinstance(node, exp.Join):
        if _fk_total(node):
            return "fk_join_total"
        if _null_rejected(node):
            return "null_rejected_join"
    elif edit == "distinct" and isinstance(node, exp.Select):
        if _set_operand(node):
            return "set_semantics"
        if _unique_rows(node):
            return "unique_rows"
    elif edit == "count_distinct" and isinstance(node, exp.Count):
        if _counts_primary_key(node):
            return "unique_count"
    return None


def _tables(select: exp.Select) -> dict[str, tuple[str, bool]] | None:
    """alias -> (CDM table, on the nullable side of an outer join) for the FROM and
    JOINs of ``select``; None if any of them is not a plain CDM table."""
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    found: dict[str, tuple[str, bool]] = {}
    items = [(from_.this, None), *((j.this, j) for j in select.args.get("joins") or [])]
    for source, join in items:
        if not isinstance(source, exp.Table) or source.name not in CDM_REQUIRED:
            return None
        side = (join.side or "").upper() if join is not None else ""
        found[source.alias_or_name] = (source.name, side in ("LEFT", "FULL"))
    if any(((j.side or "").upper() in ("RIGHT", "FULL")) for j in select.args.get("joins") or []):
        return None  # the FROM's rows may be the nullable side
    return found


def _fk_total(join: exp.Join) -> bool:
    """The join's condition is ``key = ref``: ``key`` the joined CDM table's primary key,
    ``ref`` a never-NULL column of another source (a CDM table, or a CTE or derived table
    that copies one) that references the joined table."""
    select = join.parent
    on = join.args.get("on")
    if not isinstance(select, exp.Select) or not isinstance(on, exp.EQ):
        return False
    found = sources(select)
    if found is None or not isinstance(join.this, exp.Table):
        return False
    joined = join.this.alias_or_name
    target = found.get(joined, (None, False))[0]
    if not isinstance(target, str):
        return False
    sides = (on.this, on.expression)
    if not all(isinstance(c, exp.Column) for c in sides):
        return False
    for key, ref in (sides, sides[::-1]):
        if owner(key, found) != joined or key.name != _key_of(target):
            continue
        if owner(ref, found) in (None, joined) or not never_null(select, ref):
            continue
        origin = base_column(select, ref)
        if origin is not None and references(origin[0], origin[1], target):
            return True
    return False


def _key_of(table: str) -> str | None:
    return "concept_id" if table == "concept" else primary_key(table)


def _null_rejected(join: exp.Join) -> bool:
    select = join.parent
    if not isinstance(select, exp.Select) or not isinstance(join.this, exp.Table):
        return False
    joined = join.this.alias_or_name
    where = select.args.get("where")
    conditions = conjuncts(where.this if where is not None else None)
    for other in select.args.get("joins") or []:
        if other is not join and not other.side and (other.kind or "").upper() in ("", "INNER"):
            conditions += conjuncts(other.args.get("on"))
    return any(_compares_column_of(c, joined) for c in conditions)


def _compares_column_of(condition: exp.Expr, alias: str) -> bool:
    """A comparison one of whose direct operands is a column of ``alias`` (a NULL there
    makes the condition NULL, so the row is dropped)."""
    if not isinstance(condition, _COMPARISONS):
        return False
    operands = [condition.this, condition.args.get("expression")]
    return any(isinstance(o, exp.Column) and o.table == alias for o in operands)


def _set_operand(select: exp.Select) -> bool:
    parent = select.parent
    if isinstance(parent, exp.Exists):
        return True
    if isinstance(parent, exp.Subquery) and isinstance(parent.parent, (exp.In, exp.Any)):
        return True
    if isinstance(parent, (exp.Union, exp.Intersect, exp.Except)):
        return bool(parent.args.get("distinct"))
    return False


def _unique_rows(select: exp.Select) -> bool:
    return bool(output_keys(select, ignore_distinct=True))


def _counts_required(column: exp.Column, other: str) -> bool:
    """COUNT(a) for COUNT(b), both required columns of one table that is not the
    nullable side of an outer join: each counts every row."""
    count = column.parent
    if not isinstance(count, exp.Count) or count.this is not column:
        return False
    select = column.find_ancestor(exp.Select)
    tables = _tables(select) if select is not None else None
    if not tables:
        return False
    if column.table:
        found = tables.get(column.table)
    else:
        found = next(iter(tables.values())) if len(tables) == 1 else None
    if found is None or found[1]:
        return False
    required = CDM_REQUIRED[found[0]]
    return required.get(column.name, False) and required.get(other, False)


def _counts_primary_key(count: exp.Count) -> bool:
    """COUNT(x) and COUNT(DISTINCT x) where ``x`` alone is a unique key of the rows, or is
    equal to one on every row where it is not NULL (the rows COUNT counts)."""
    inner = count.this
    if isinstance(inner, exp.Distinct) and len(inner.expressions) == 1:
        inner = inner.expressions[0]
    select = count.find_ancestor(exp.Select)
    if not isinstance(inner, exp.Column) or select is None:
        return False
    found = sources(select)
    alias = owner(inner, found) if found else None
    if alias is None:
        return False
    ref = (alias, inner.name)
    keys = row_keys(select)
    if any(key <= {ref} for key in keys):
        return True
    # a column equal to a one-column key wherever it is counted (not NULL)
    same = equal_where_set(select, ref)
    if any(len(key) == 1 and key <= same for key in keys):
        return True
    # a column of a LEFT JOIN's table: COUNT sees only the rows where it found a match,
    # the rows of the same SELECT with an inner join there
    return any(key <= {ref} for key in row_keys(_matched_only(select, alias)))


def _matched_only(select: exp.Select, alias: str) -> exp.Select:
    """``select`` with the LEFT JOIN that brings ``alias`` made an inner join (a copy; the
    same SELECT if no LEFT JOIN brings it)."""
    joins = select.args.get("joins") or []
    at = [i for i, j in enumerate(joins) if j.this.alias_or_name == alias]
    if len(at) != 1 or (joins[at[0]].side or "").upper() != "LEFT":
        return select
    inner = select.copy()
    inner.args["joins"][at[0]].set("side", None)
    return inner


def _null_test_required(column: exp.Column, other: str) -> bool:
    """``x IS NULL`` for ``y IS NULL``, both required columns of one CDM table."""
    test = column.parent
    if not (
        isinstance(test, exp.Is) and test.this is column and isinstance(test.expression, exp.Null)
    ):
        return False
    select = column.find_ancestor(exp.Select)
    found = sources(select) if select is not None else None
    alias = owner(column, found) if found else None
    if alias is None or not isinstance(found[alias][0], str):  # type: ignore[index]
        return False
    required = CDM_REQUIRED[found[alias][0]]  # type: ignore[index]
    return required.get(column.name, False) and required.get(other, False)


def _unused_output(column: exp.Column, other: str) -> bool:
    """The column is inside a projection of a CTE or derived table (no DISTINCT, no set
    operation) whose output column no query reading it names, and that its own SELECT
    does not name again (ORDER BY, GROUP BY, a lateral alias).  A projection that is the
    bare column (no alias) is named after it: then neither its name nor ``other``'s, the
    column swapped in, which names the output after the edit, may be named."""
    projection: exp.Expr = column
    while projection.parent is not None and not isinstance(projection.parent, exp.Select):
        projection = projection.parent
    select = projection.parent
    if not isinstance(select, exp.Select) or projection.arg_key != "expressions":
        return False
    if select.args.get("distinct") is not None:
        return False
    if projection.alias:
        names = {projection.alias}
    elif projection is column and other:
        names = {column.name, other}
    else:
        return False
    readers = _readers(select)
    if not readers:
        return False
    found = sources(select)
    if found is None:
        return False
    offered = set().union(*(column_names(src) or set() for src, _ in found.values()))
    if any(n not in offered and _named_elsewhere(select, projection, n) for n in names):
        return False  # a lateral alias may read it
    for key in ("order", "group", "having", "qualify"):
        if any(c.name in names for c in (select.args.get(key) or exp.Null()).find_all(exp.Column)):
            return False
    for reader, alias in readers:
        if (
            any(
                isinstance(e.unalias(), exp.Star) or e.unalias().is_star for e in reader.expressions
            )
            or any(
                j.args.get("using") or j.args.get("method")  # USING, NATURAL: joined by name
                for j in reader.args.get("joins") or []
            )
            or reader.find(exp.Columns) is not None
        ):  # COLUMNS('regex') reads by name
            return False
        for c in _own_columns(reader, select):
            if c.name in names and c.table in ("", alias):
                return False
    return True


def _own_columns(reader: exp.Select, skip: exp.Select) -> list[exp.Column]:
    """The columns ``reader`` names, its WITH clause and ``skip`` left out."""
    out = []
    for node in reader.iter_expressions():
        if node.arg_key == "with_" or node is skip:
            continue
        out += [c for c in node.find_all(exp.Column) if not _within(c, skip)]
    return out


def _within(node: exp.Expr, ancestor: exp.Expr) -> bool:
    """Whether ``ancestor`` is ``node`` or one of its ancestors (by identity)."""
    walk: exp.Expr | None = node
    while walk is not None:
        if walk is ancestor:
            return True
        walk = walk.parent
    return False


def _named_elsewhere(select: exp.Select, projection: exp.Expr, name: str) -> bool:
    return any(c.name == name and not _within(c, projection) for c in select.find_all(exp.Column))


def _readers(select: exp.Select) -> list[tuple[exp.Select, str]] | None:
    """The SELECTs that read ``select`` (a CTE's body or a derived table), each with the
    alias it reads it under; None if ``select`` is neither or a reader is not plain."""
    parent = select.parent
    if isinstance(parent, exp.Subquery) and isinstance(parent.parent, (exp.From, exp.Join)):
        reader = parent.parent.parent
        if not isinstance(reader, exp.Select) or not parent.alias:
            return None
        return [(reader, parent.alias)]
    if not isinstance(parent, exp.CTE) or parent.args.get("alias") is None:
        return None
    if parent.args["alias"].columns:
        return None
    name = parent.alias
    root = select.root()
    found = []
    for table in root.find_all(exp.Table):
        if table.name != name or table.args.get("db"):
            continue
        reader = table.parent.parent if isinstance(table.parent, (exp.From, exp.Join)) else None
        if not isinstance(reader, exp.Select):
            return None
        found.append((reader, table.alias_or_name))
    return found or None
