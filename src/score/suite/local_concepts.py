"""Local concepts: the rows a suite adds to the vocabulary so its filters can be missed.

A suite's variants keep every row of the base database's vocabulary.  On a small
vocabulary, a gold's filter on the ``concept`` table often selects the same concepts as
its near miss: every 'Clinical Drug' of the embedded vocabulary is an RxNorm one, so
``c.vocabulary_id = 'RxNorm' AND c.concept_class_id = 'Clinical Drug'`` with its first
conjunct dropped returns the gold's rows on every variant, though not on a fuller
vocabulary.  The suite therefore adds *local concepts*, as a site adds its own: ids
above 2,000,000,000, the range the OMOP CDM leaves to local vocabularies.

Each is a copy of a *template*, a concept the gold's filters select, that misses one
filter of that gold and keeps the others: its vocabulary made the suite's own
(``Local``, a row the suite adds to ``vocabulary``), its class another of the base
vocabulary's (of the template's domain where it has one), its domain another (a
condition recorded with a concept the vocabulary has since moved to Observation), its
validity date a day before or after the date a gold compares it with, its code one
character off, or its name one that a near miss of the gold's LIKE pattern
(``like_altered``) tells from the pattern. A standard concept a gold names gets a child
too, named after it, and the first such concept a grandchild that sits under the child
and under the concept itself, as a real hierarchy's concept reached by two paths does:
its least and greatest levels of separation from the concept differ (1 and 2); a lateral
concept beside it, 0 levels apart from it though another concept (as a Branded Drug is
from its Clinical Drug: a gold that takes level 0 for the concept itself meets it); and
a source concept, not standard and in no hierarchy, that 'Maps to' it, as a site's own
codes do (a gold that reads a mapping from one side is told from one that reads it from
the other). A copy in ``Local`` keeps its template's code; one in its template's
vocabulary gets a code no concept of that vocabulary has, one character changed
(:func:`free_code`): a vocabulary's code names one concept, and a gold may read the
code's form (LOINC's check digit after the dash). A copy sits under its template in
``concept_ancestor`` (and under the template's ancestors, a level further down), so a
gold that selects by ancestor still reaches it; it keeps its template's standard flag,
and the candidates aimed at its gold use it in the clinical rows of its template's
domain (:func:`score.suite.focus.focus_of`).

>>> separating_names("%biopsy%")
['biops', 'biopsy z', 'z biopsy']
>>> like("%biopsy%", "z biopsy"), like("biopsy%", "z biopsy")
(True, False)
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from score.suite.neighbours import altered_patterns

#: the first id of a local concept: the CDM leaves ids above 2,000,000,000 to a site
FIRST_LOCAL_ID = 2_000_000_001
#: how many concepts a gold's filters select serve as templates
TEMPLATES = 2
#: the vocabulary of a copy that misses a gold's vocabulary filter, as the suite adds it
LOCAL_VOCABULARY = {
    "vocabulary_id": "Local",
    "vocabulary_name": "Local concepts of a sqlgold test suite",
    "vocabulary_reference": "sqlgold suite build",
    "vocabulary_version": None,
    "vocabulary_concept_id": 0,
}
#: the rows the suite adds to the vocabulary's lookup tables, whether a copy uses them or not
LOCAL_LOOKUP_ROWS = {
    "vocabulary": LOCAL_VOCABULARY,
    "domain": {
        "domain_id": "Local",
        "domain_name": "Local domain of a sqlgold test suite",
        "domain_concept_id": 0,
    },
    "concept_class": {
        "concept_class_id": "Local",
        "concept_class_name": "Local concept class of a sqlgold test suite",
        "concept_class_concept_id": 0,
    },
}
#: how many of the concepts a gold names get a local child
CHILDREN = 4
#: how many of them also get a grandchild that sits under the child and the concept,
#: and a source concept that maps to the concept
GRANDCHILDREN = 1
#: the columns whose filters a local concept misses, and how
_SWAPPED = ("concept_class_id", "domain_id")
_NEAR = ("concept_code",)
_NAMED = ("concept_name", "concept_code")
#: a filter on these misses by a day on either side of its date
_DATED = ("valid_start_date", "valid_end_date")


@dataclass(frozen=True, order=True)
class LocalConcept:
    """A copy of concept ``template`` with ``column`` set to ``value``, ``levels`` below
    it at most: 2 for a grandchild, which also sits under the template's local child
    (one level below the template by one path, two by the other); 0 for a source
    concept, not standard and in no hierarchy, that 'Maps to' the template, or, if
    ``lateral``, a standard concept beside the template: under it and its ancestors with
    no level added, as a lateral relationship of a real vocabulary leaves them (a
    Branded Drug and its Clinical Drug are 0 levels apart)."""

    template: int
    column: str
    value: str
    levels: int = 1
    lateral: bool = False


def like(pattern: str, text: str) -> bool:
    """Whether ``text`` matches the SQL LIKE ``pattern`` (``%`` any run, ``_`` one
    character, case kept, no escape character)."""
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, text, flags=re.DOTALL) is not None


def _fillings(pattern: str) -> Iterable[str]:
    """Strings made from ``pattern`` with each ``%`` empty or ``z`` plus a space on its
    side, and each ``_`` an ``a``."""
    pieces = pattern.replace("_", "a").split("%")
    wild = len(pieces) - 1
    for choice in itertools.product((False, True), repeat=min(wild, 4)):
        out = pieces[0]
        for i, piece in enumerate(pieces[1:]):
            filled = choice[i] if i < len(choice) else False
            out += (("z " if i == 0 and not pieces[0] else " z") if filled else "") + piece
        yield out


def separating_names(pattern: str) -> list[str]:
    """For each near miss of a LIKE ``pattern`` (:func:`altered_patterns`), the shortest
    string made from either of them that one matches and the other does not; sorted."""
    found = set()
    for near in altered_patterns(pattern):
        options = sorted(
            {
                s
                for source in (pattern, near)
                for s in _fillings(source)
                if s and like(pattern, s) != like(near, s)
            },
            key=lambda s: (len(s), s),
        )
        if options:
            found.add(options[0])
    return sorted(found)


def _near_code(value: str) -> str:
    return value[:-1] if len(value) > 1 else value + "x"


def _templates(con: duckdb.DuckDBPyConnection, filters: Sequence[dict]) -> list[int]:
    """Up to :data:`TEMPLATES` concepts that all of ``filters`` select (each filter's
    own first ones where none is selected by all), in id order."""

    def where(f: dict) -> tuple[str, Any]:
        return (f'"{f["column"]}" ILIKE ?' if f["like"] else f'"{f["column"]}" = ?'), f["value"]

    parts = [where(f) for f in filters]
    rows = con.execute(
        "SELECT concept_id FROM concept WHERE "
        + " AND ".join(p for p, _ in parts)
        + f" ORDER BY concept_id LIMIT {TEMPLATES}",
        [v for _, v in parts],
    ).fetchall()
    if rows:
        return [r[0] for r in rows]
    found: set[int] = set()
    for part, value in parts:
        found |= {
            r[0]
            for r in con.execute(
                f"SELECT concept_id FROM concept WHERE {part} ORDER BY concept_id LIMIT 1",
                [value],
            ).fetchall()
        }
    return sorted(found)[:TEMPLATES]


def _other_value(
    con: duckdb.DuckDBPyConnection, column: str, value: Any, template: int
) -> str | None:
    """The base vocabulary's most frequent value of ``column`` other than ``value``,
    among the concepts of the template's domain where there is one."""
    for scoped in (True, False):
        scope = (
            "AND domain_id = (SELECT domain_id FROM concept WHERE concept_id = ?)" if scoped else ""
        )
        rows = con.execute(
            f'SELECT "{column}" FROM concept WHERE "{column}" IS NOT NULL '
            f'AND "{column}" <> ? {scope} GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1',
            [value, template] if scoped else [value],
        ).fetchall()
        if rows:
            return str(rows[0][0])
    return None


def local_concepts_of(
    con: duckdb.DuckDBPyConnection, filters: Sequence[dict], named: Iterable[int] = ()
) -> list[LocalConcept]:
    """The local concepts one gold calls for, on the base vocabulary of ``con``: those
    its filters on the ``concept`` table (as :func:`score.suite.value_pool.gold_constants`
    finds them) call for, and a child of each standard concept it names (the first
    :data:`CHILDREN` of them), named after it with `` (local)``: a gold that takes a
    concept's descendants counts the child, one that takes the concept alone does not;
    sorted, each once."""
    out: set[LocalConcept] = set(_children(con, sorted(set(named))[:CHILDREN]))
    usable = [f for f in filters if isinstance(f["value"], str)]
    days = {
        id(f): day
        for f in usable
        if f["column"] in _DATED and not f["like"] and (day := _day(f["value"])) is not None
    }
    selecting = [f for f in usable if f["column"] not in _DATED]
    if not selecting:
        selecting = [f for f in usable if id(f) in days]
    if not selecting:
        return sorted(out)
    for template in _templates(con, selecting):
        for f in usable:
            column, value = f["column"], f["value"]
            if id(f) in days:  # a day on either side of the date
                out |= {
                    LocalConcept(template, column, (days[id(f)] + dt.timedelta(days=d)).isoformat())
                    for d in (-1, 1)
                }
            elif f["like"] and column in _NAMED:
                out |= {LocalConcept(template, column, name) for name in separating_names(value)}
            elif column == "vocabulary_id":
                if value != LOCAL_VOCABULARY["vocabulary_id"]:
                    out.add(LocalConcept(template, column, LOCAL_VOCABULARY["vocabulary_id"]))
            elif column in _SWAPPED:
                other = _other_value(con, column, value, template)
                if other is not None:
                    out.add(LocalConcept(template, column, other))
            elif column in _NEAR or column == "concept_name":
                out.add(LocalConcept(template, column, _near_code(value)))
    return sorted(out)


def _day(value: str) -> dt.date | None:
    """The day a date literal names (its first ten characters), or None."""
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def _children(con: duckdb.DuckDBPyConnection, named: Sequence[int]) -> list[LocalConcept]:
    if not named:
        return []
    rows = con.execute(
        "SELECT concept_id, concept_name FROM concept WHERE standard_concept = 'S' "
        "AND concept_id IN (SELECT UNNEST(?::BIGINT[])) ORDER BY 1",
        [list(named)],
    ).fetchall()
    out = [LocalConcept(c, "concept_name", _child_name(name)) for c, name in rows]
    for c, name in rows[:GRANDCHILDREN]:
        out.append(LocalConcept(c, "concept_name", f"{name} (local, two levels)", levels=2))
        out.append(LocalConcept(c, "concept_name", f"{name} (local source)", levels=0))
        out.append(
            LocalConcept(c, "concept_name", f"{name} (local, lateral)", levels=0, lateral=True)
        )
    return out


def _child_name(name: str) -> str:
    return f"{name} (local)"


def free_code(code: str, used: set[str]) -> str:
    """``code`` with one character changed (the last letter or digit that can be, to
    the first of its kind ``used`` lacks), so it keeps its form; ``code`` and a digit
    where every such change is taken.

    >>> free_code("6082-2", {"6082-2", "6082-0"})
    '6082-1'
    >>> free_code("ab", set())
    'aa'
    """
    kinds = (string.digits, string.ascii_lowercase, string.ascii_uppercase)
    for at in range(len(code) - 1, -1, -1):
        kind = next((k for k in kinds if code[at] in k), None)
        for ch in kind or ():
            candidate = code[:at] + ch + code[at + 1 :]
            if candidate != code and candidate not in used:
                return candidate
    n = 0
    while f"{code}{n}" in used:
        n += 1
    return f"{code}{n}"


def local_ids(concepts: Iterable[LocalConcept]) -> dict[LocalConcept, int]:
    """Each local concept's id, in the order of the concepts, a grandchild before the
    other copies of its template (so ordering its template's descendants by the least
    levels of separation, ties broken by id, and by the greatest gives two orders): the
    same concepts give the same ids."""
    ordered = sorted(set(concepts), key=lambda c: (c.template, -c.levels, c))
    return {c: FIRST_LOCAL_ID + i for i, c in enumerate(ordered)}


def local_rows(
    con: duckdb.DuckDBPyConnection, ids: Mapping[LocalConcept, int]
) -> dict[str, list[dict[str, Any]]]:
    """Vocabulary table -> the rows the local concepts ``ids`` add to it: in ``concept``,
    each a copy of its template with one column changed; in ``concept_ancestor``, each
    its own ancestor if the template is standard, and a descendant one level below the
    template and each of its ancestors (a grandchild: one level below the template's
    child, and one to two below the template); in ``concept_relationship``, its
    template's 'Subsumes' it and it 'Is a' its template (a grandchild the template's
    child too), and a standard one 'Maps to' itself; in ``vocabulary``, ``domain`` and
    ``concept_class``, the suite's own (:data:`LOCAL_LOOKUP_ROWS`)."""
    if not ids:
        return {}
    templates = sorted({c.template for c in ids})
    listed = ", ".join(str(int(t)) for t in templates)
    cursor = con.execute(f"SELECT * FROM concept WHERE concept_id IN ({listed})")
    names = [d[0] for d in cursor.description]
    rows = {r[0]: dict(zip(names, r, strict=True)) for r in cursor.fetchall()}
    ancestors: dict[int, list[tuple[int, int, int]]] = {}
    for ancestor, descendant, low, high in con.execute(
        "SELECT ancestor_concept_id, descendant_concept_id, min_levels_of_separation, "
        f"max_levels_of_separation FROM concept_ancestor WHERE descendant_concept_id IN ({listed}) "
        "ORDER BY 1, 2"
    ).fetchall():
        ancestors.setdefault(descendant, []).append((ancestor, low, high))
    codes: dict[str, set[str]] = {}
    for vocabulary_id, code in con.execute(
        "SELECT vocabulary_id, concept_code FROM concept ORDER BY 1, 2"
    ).fetchall():
        codes.setdefault(vocabulary_id, set()).add(code)
    concept_rows: list[dict[str, Any]] = []
    ancestor_rows: list[dict[str, Any]] = []
    relationship_rows: list[dict[str, Any]] = []
    for local, concept_id in sorted(ids.items(), key=lambda kv: kv[1]):
        template = rows.get(local.template)
        if template is None:
            continue
        value: Any = local.value
        if local.column in _DATED:
            value = dt.date.fromisoformat(value)
        row = dict(template, concept_id=concept_id, **{local.column: value})
        if local.levels == 0 and not local.lateral:  # a source concept: not standard
            row["standard_concept"] = None
        used = codes.setdefault(row["vocabulary_id"], set())
        if row["concept_code"] in used:
            row["concept_code"] = free_code(row["concept_code"], used)
        used.add(row["concept_code"])
        concept_rows.append(row)
        if local.levels == 0 and not local.lateral:  # a source concept: mapped, in no hierarchy
            pairs = [
                (concept_id, local.template, "Maps to"),
                (local.template, concept_id, "Mapped from"),
            ]
        else:
            pairs = _hierarchy(local, concept_id, template, row, ids, ancestors, ancestor_rows)
        relationship_rows += [
            {
                "concept_id_1": one,
                "concept_id_2": two,
                "relationship_id": relationship,
                "valid_start_date": template["valid_start_date"],
                "valid_end_date": template["valid_end_date"],
                "invalid_reason": None,
            }
            for one, two, relationship in pairs
        ]
    out = {
        "concept": concept_rows,
        "concept_ancestor": ancestor_rows,
        "concept_relationship": relationship_rows,
    }
    # the suite's own vocabulary, domain and class: a lookup row that no concept (or only
    # a local one) uses, as a site's vocabulary subset has, so a gold that keeps the
    # lookup rows without concepts (domain LEFT JOIN concept) is told from an inner join
    out.update({t: [dict(row)] for t, row in LOCAL_LOOKUP_ROWS.items()})
    return out


def _hierarchy(
    local: LocalConcept,
    concept_id: int,
    template: Mapping[str, Any],
    row: Mapping[str, Any],
    ids: Mapping[LocalConcept, int],
    ancestors: Mapping[int, list[tuple[int, int, int]]],
    ancestor_rows: list[dict[str, Any]],
) -> list[tuple[int, int, str]]:
    """A copy's rows in ``concept_ancestor`` (appended to ``ancestor_rows``) and its
    pairs for ``concept_relationship``: under its template, and a grandchild under its
    template's child too."""
    if row.get("standard_concept") == "S":
        ancestor_rows.append(_ancestry(concept_id, concept_id, 0, 0))
    step = 0 if local.lateral else 1
    for ancestor, low, high in ancestors.get(local.template, []):
        ancestor_rows.append(_ancestry(ancestor, concept_id, low + step, high + local.levels))
    pairs = (
        []  # beside its template: no 'Is a' between them
        if local.lateral
        else [(concept_id, local.template, "Is a"), (local.template, concept_id, "Subsumes")]
    )
    parent = LocalConcept(local.template, "concept_name", _child_name(template["concept_name"]))
    if local.levels == 2 and parent in ids:  # under the template's child too
        ancestor_rows.append(_ancestry(ids[parent], concept_id, 1, 1))
        pairs += [(concept_id, ids[parent], "Is a"), (ids[parent], concept_id, "Subsumes")]
    if row.get("standard_concept") == "S":
        pairs.append((concept_id, concept_id, "Maps to"))
    return pairs


def _ancestry(ancestor: int, descendant: int, low: int, high: int) -> dict[str, int]:
    return {
        "ancestor_concept_id": ancestor,
        "descendant_concept_id": descendant,
        "min_levels_of_separation": low,
        "max_levels_of_separation": high,
    }


def by_domain(
    concepts: Iterable[LocalConcept], ids: Mapping[LocalConcept, int], domains: Mapping[int, str]
) -> dict[str, list[int]]:
    """Domain -> the ids of ``concepts`` (each in its template's domain), in id order;
    no source concept (a clinical table's concept column holds standard ones)."""
    out: dict[str, list[int]] = {}
    for c in sorted(
        {c for c in concepts if c in ids and (c.levels or c.lateral)}, key=ids.__getitem__
    ):
        domain = domains.get(c.template)
        if domain is not None:
            out.setdefault(domain, []).append(ids[c])
    return out
