"""Give the nodes of a gold query their SQL Server types, without rewriting the query.

sqlglot's type annotation needs a qualified tree (every column tied to its table), and
``qualify`` rewrites heavily: it quotes identifiers, aliases every projection and adds
table prefixes.  To keep the gold SQL as its author wrote it, the tree is qualified and
annotated on a *copy*; each copy node is mapped to the original node at its place, and
the types found on the copy nodes that survive ``qualify`` are written back onto their
originals.  Rules then decide from ``node.type`` and edit the original, readable tree.
Annotation runs once per query.

>>> from sqlglot import parse_one
>>> tree = annotate(parse_one("SELECT year_of_birth / 2 FROM cdm.person", read="tsql"), "tsql")
>>> tree.sql("tsql"), tree.selects[0].type.sql()
('SELECT year_of_birth / 2 FROM cdm.person', 'BIGINT')
"""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema, Schema

from curate.transpile.rules.tsql_dialect import SqlgoldTSQL
from score.cdm.schema import CDM_TABLES

CDM_SCHEMA_NAME = "cdm"


class CannotAnnotate(ValueError):
    """sqlglot could not qualify the query, so its types are unknown."""


@lru_cache(maxsize=4)
def cdm_schema(dialect: str = "duckdb") -> MappingSchema:
    """The CDM v5.4 tables under schema ``cdm``, with their DuckDB column types.

    Names are normalized as ``dialect`` normalizes unquoted names (Oracle's upper case), so
    a query read in that dialect finds them.

    >>> cdm_schema().column_names("cdm.person")[:2]
    ['person_id', 'gender_concept_id']
    """
    mapping = {
        CDM_SCHEMA_NAME: {
            table: {name: dtype for name, dtype, _ in columns}
            for table, columns in CDM_TABLES.items()
        }
    }
    if dialect == "duckdb":
        return MappingSchema(mapping, dialect="duckdb")
    return MappingSchema(mapping, dialect=dialect, normalize=True)


def as_schema(schema: Schema | dict | None, dialect: str = "duckdb") -> Schema:
    """A sqlglot schema from a mapping ``{schema: {table: {column: type}}}``, or the CDM."""
    if schema is None:
        return cdm_schema("oracle" if dialect == "oracle" else "duckdb")
    if isinstance(schema, Schema):
        return schema
    return MappingSchema(schema, dialect="duckdb")


def type_rules(read: str) -> dict:
    """How ``read`` types expressions (SQL Server's rules for tsql, not the schema's DuckDB).

    sqlglot types with the schema's dialect unless told otherwise, and the CDM schema is
    written in DuckDB types: FLOOR(int) would be a DOUBLE, as in DuckDB, not an INT.
    """
    if read == "tsql":
        return SqlgoldTSQL.EXPRESSION_METADATA
    return Dialect.get_or_raise(read).EXPRESSION_METADATA


def annotate(
    tree: exp.Expression, read: str, schema: Schema | dict | None = None
) -> exp.Expression:
    """Set ``.type`` on the nodes of ``tree`` (in place) and return it.

    Nodes whose type cannot be found are left UNKNOWN.  If the query cannot be qualified
    at all, :class:`CannotAnnotate` is raised and ``tree`` is left as it was.
    """
    nodes = list(tree.walk())
    copy = _bare_copy(tree, nodes)
    # a copy walks in the original's order: each copy node stands for the original node
    # at its place.  qualify moves nodes and replaces some; a surviving copy node is found
    # by its id, and the list keeps every copy node alive, so no new node can take an id
    copies = list(copy.walk())
    original_of = {id(c): o for c, o in zip(copies, nodes, strict=True)}
    try:
        qualified = qualify(
            copy,
            schema=as_schema(schema, read),
            dialect=read,
            validate_qualify_columns=False,
            quote_identifiers=False,
            identify=False,
        )
        typed = annotate_types(
            qualified,
            schema=as_schema(schema, read),
            dialect=read,
            expression_metadata=type_rules(read),
        )
    except (OptimizeError, ValueError, KeyError) as error:
        raise CannotAnnotate(str(error)) from error
    for node in typed.walk():
        dtype = node.type
        if dtype is not None:
            original = original_of.get(id(node))
            if original is not None:
                original.type = dtype
    for select in tree.find_all(exp.Select):
        _type_repeated_keys(select)
    return tree


def _bare_copy(tree: exp.Expression, nodes: list[exp.Expression]) -> exp.Expression:
    """A copy of ``tree`` (whose nodes are ``nodes``) without its nodes' comments and
    metadata (the parser's line and column of each token).

    Neither changes a type, and sqlglot deep-copies each node's metadata dict with
    :func:`copy.deepcopy`, which took half of the copy's time: they are set aside on the
    original for the copy and put back.
    """
    kept = [(n, n._meta, n.comments) for n in nodes if n._meta is not None or n.comments]
    for node, _, _ in kept:
        node._meta = None
        node.comments = None
    try:
        return tree.copy()
    finally:
        for node, meta, comments in kept:
            node._meta = meta
            node.comments = comments


def _type_repeated_keys(select: exp.Select) -> None:
    """Type GROUP BY / ORDER BY keys that repeat a projection like the projection.

    With a GROUP BY, ``qualify`` replaces such a key by the projection's alias, so the
    original key got no type; left untyped, sqlglot writes it differently from the
    projection (``YEAR(CAST(d AS DATE))`` against ``YEAR(d)``) and DuckDB refuses it.
    """
    keys = []
    for clause in ("group", "order"):
        node = select.args.get(clause)
        if node is not None:
            keys += [k.this if isinstance(k, exp.Ordered) else k for k in node.expressions]
    if not keys:
        return
    projections = {p.unalias(): p.unalias() for p in select.expressions}
    for key in keys:
        twin = projections.get(key)
        if twin is None or twin is key:
            continue
        for mine, theirs in zip(key.walk(bfs=False), twin.walk(bfs=False), strict=False):
            if mine.type is None and theirs.type is not None:
                mine.type = theirs.type
