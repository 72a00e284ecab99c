"""One template's render and transpile, reused for every record that only renames its holes.

DataQualityDashboard's 2,533 check instances come from 26 OHDSI templates: each record is
a template and parameters, most of them the CDM table and field it checks and a concept
id.  Rendering (SqlRender) and transpiling (sqlglot and the fix-up rules) such a record
gives the same DuckDB query as another record of the template, but for those names and
numbers.  This cache renders and transpiles the first record of each *shape* and writes
the others from it:

* **holes** are parameters whose value is the name of a CDM table or column, or a plain
  integer (1 to 9 digits), used in the template and in no SqlRender condition (a
  condition sees the value itself);
* a record's **shape** is what the transpile can tell of it apart from the holes' values:
  the template rendered with a placeholder in every hole (its *skeleton*), the other
  parameters, how the holes' values are written (lower, upper or mixed case), which holes
  share a value, and the CDM schema as it bears on the query: for every CDM table the
  skeleton or a hole names and every CDM column it or a hole names, whether the table has
  the column and its type.  Nothing else of a name reaches the transpile (its rules read
  types, CDM membership and case; names are never compared with text or sorted), except
  the width of a warning that quotes SQL cut to 60 characters: a warning (or a drop's
  reason) quoting a hole's value is never written from a template;
* the first record of a shape is rendered and transpiled in full; its output, with each
  hole's value (as written, lower and upper case) replaced by a marker, is the shape's
  template.  A hole is written from the template only once a record with another value
  in it was done in full and gave exactly the template filled with its values (a check
  per hole); a template that fails a check is never used again.  A hole a condition reads,
  or whose value the skeleton also writes, counts as a fixed parameter instead.

The same records give the same readings with the cache on or off (tested on every fourth
record of DataQualityDashboard's corpus; DuckDB, PostgreSQL and Oracle SQL and records with
an answer are always read in full); ``CurationOptions(template_cache=False)`` (or
``enabled=False``) turns it off.

>>> cache = TemplateCache(lambda record: ((), None, None))
>>> cache.stats()
{'records': 0, 'written': 0, 'done_in_full': 0, 'shapes': 0}
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from curate.ohdsi.errors import RenderError
from curate.ohdsi.render import as_text, render
from curate.ohdsi.template import parameter_uses, without_defaults
from curate.sources.records import SourceRecord
from curate.transpile.to_duckdb import Transpiled
from curate.verify.gold import Drop
from score.cdm.schema import CDM_TABLES

#: How a record is read in full: render notes, the rendered record (None when written
#: from a template), and its gold as DuckDB SQL or the drop saying why not.
Reader = Callable[[SourceRecord], tuple[tuple[str, ...], SourceRecord | None, Transpiled | Drop]]

_TABLES = {t.lower(): {c.lower(): ty for c, ty, _ in cols} for t, cols in CDM_TABLES.items()}
_COLUMNS = frozenset(c for cols in _TABLES.values() for c in cols)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[1-9][0-9]{0,8}")
_WORDS = re.compile(r"[A-Za-z0-9_]+")  # what _word's edges cannot cut: a whole name
_NUMBER_WORDS = re.compile(r"[A-Za-z0-9_.]+")  # a whole number's edges exclude "." too
_MARK = "\x00"


@dataclass
class _Shape:
    """A shape's template (once checked) and the record it was made from."""

    values: dict[str, str]
    reading: tuple[tuple[str, ...], Transpiled | Drop]
    checked: frozenset[str] = frozenset()  # holes whose writing a full reading confirmed
    broken: bool = False

    def writes(self, values: dict[str, str]) -> bool:
        """Whether a record with ``values`` can be written (every changed hole checked)."""
        return not self.broken and all(
            h in self.checked for h, v in values.items() if v != self.values[h]
        )


@dataclass(frozen=True)
class _Skeleton:
    """The template rendered with placeholders: what the holes' shape keys on."""

    text: str | None  # None: the render failed
    names: frozenset[str]  # CDM table and column names it writes itself
    conditional: frozenset[str] = frozenset()  # holes a SqlRender condition reads
    # the text's words (runs of letters, digits and _) and number words (the same with
    # the decimal point), lower case; None when the text is not ASCII (see _occurs)
    words: frozenset[str] | None = None
    number_words: frozenset[str] | None = None

    def writes(self, value: str) -> bool:
        """Whether the text holds ``value`` (a hole's) as a whole name or number, in any
        case: the value is one of its words.  Looked up in the words found once per
        skeleton, not searched for: a search pattern per value outgrew ``re``'s cache of
        compiled patterns (DataQualityDashboard: thousands of values), and compiling them
        cost more than the rest of the cache's work."""
        if self.text is None:
            return False
        if self.words is None or self.number_words is None:
            return _occurs(value, self.text)
        return value.lower() in (self.number_words if value[:1].isdigit() else self.words)


class TemplateCache:
    """Render + transpile of OHDSI records, reused across records of one shape."""

    def __init__(self, reader: Reader, *, enabled: bool = True) -> None:
        self._read = reader
        self.enabled = enabled
        self._skeletons: dict[tuple, _Skeleton] = {}
        self._shapes: dict[tuple, _Shape] = {}
        self._uses: dict[str, tuple[str, ...]] = {}
        self._count = {"records": 0, "written": 0, "done_in_full": 0}

    def stats(self) -> dict[str, int]:
        return {**self._count, "shapes": len(self._shapes)}

    def read(
        self, record: SourceRecord
    ) -> tuple[tuple[str, ...], SourceRecord | None, Transpiled | Drop]:
        """The record's render notes, rendered record (None if written) and gold reading."""
        self._count["records"] += 1
        key, values = self._key(record) if self.enabled else (None, {})
        shape = self._shapes.get(key) if key is not None else None
        if shape is not None and shape.writes(values):
            self._count["written"] += 1
            notes, gold = _fill(shape.reading, values)
            return notes, None, gold
        self._count["done_in_full"] += 1
        notes, rendered, gold = self._read(record)
        if key is None:
            return notes, rendered, gold
        if shape is None:
            template = _template((notes, gold), values)
            if template is not None:
                self._shapes[key] = _Shape(values, template)
        elif not shape.broken:
            if _fill(shape.reading, values) == (notes, gold):
                changed = {h for h, v in values.items() if v.lower() != shape.values[h].lower()}
                shape.checked = shape.checked | changed
            else:
                shape.broken = True
        return notes, rendered, gold

    # -- the shape of a record ------------------------------------------------------------

    def _key(self, record: SourceRecord) -> tuple[tuple | None, dict[str, str]]:
        if record.gold_dialect != "ohdsi" or record.answer_sql is not None:
            return None, {}
        uses = self._uses.get(record.gold_sql)
        if uses is None:
            uses = tuple(
                sorted({u.name for u in parameter_uses(without_defaults(record.gold_sql))})
            )
            self._uses[record.gold_sql] = uses
        given = {
            name: (value, as_text(value))
            for name, value in sorted((record.parameters or {}).items())
            if "@" + name in record.gold_sql  # SqlRender replaces the others nowhere
        }
        holes = {
            name: text
            for name, (value, text) in given.items()
            if name in uses and not isinstance(value, bool | list) and _is_hole(text)
        }
        for _ in range(3):
            if not holes:
                return None, {}
            fixed = tuple((n, t) for n, (_, t) in given.items() if n not in holes)
            skeleton = self._skeleton(record, fixed, tuple(holes))
            if skeleton.text is None:
                return None, {}
            # a hole a condition reads, or whose value the skeleton writes too, is a
            # parameter like the others: its value is part of the shape
            demoted = skeleton.conditional | {h for h, v in holes.items() if skeleton.writes(v)}
            if not demoted:
                return (skeleton.text, fixed, _facts(holes, skeleton.names)), holes
            holes = {h: v for h, v in holes.items() if h not in demoted}
        return None, {}

    def _skeleton(self, record: SourceRecord, fixed: tuple, holes: tuple[str, ...]) -> _Skeleton:
        key = (record.gold_sql, fixed, holes)
        found = self._skeletons.get(key)
        if found is not None:
            return found
        placeholders = {name: f"zzsghole{i}zz" for i, name in enumerate(holes)}
        seen: list[str] = []
        try:
            text = render(
                record.gold_sql, {**dict(fixed), **placeholders}, on_condition=seen.append
            ).sql
        except RenderError:
            text = None
        conditional = frozenset(
            name for name, p in placeholders.items() if any(p in c for c in seen)
        )
        found = _skeleton_of(text, conditional)
        self._skeletons[key] = found
        return found


def _skeleton_of(text: str | None, conditional: frozenset[str]) -> _Skeleton:
    """The skeleton of a rendered ``text`` (None: the render failed)."""
    if text is None:
        return _Skeleton(None, frozenset(), conditional)
    if not text.isascii():  # outside ASCII, IGNORECASE folds more than lower() does
        return _Skeleton(text, _cdm_names(text), conditional)
    return _Skeleton(
        text,
        _cdm_names(text),
        conditional,
        frozenset(w.lower() for w in _WORDS.findall(text)),
        frozenset(w.lower() for w in _NUMBER_WORDS.findall(text)),
    )


def _is_hole(text: str) -> bool:
    if _NUMBER.fullmatch(text):
        return True
    return bool(_NAME.fullmatch(text)) and (text.lower() in _TABLES or text.lower() in _COLUMNS)


def _occurs(value: str, text: str) -> bool:
    """Whether ``text`` holds ``value`` as a whole name or number, in any case."""
    return re.search(_word(value), text, re.IGNORECASE) is not None


def _word(value: str) -> str:
    """A whole name or number (a number's neighbours exclude a decimal point too)."""
    edge = "A-Za-z0-9_." if value[:1].isdigit() else "A-Za-z0-9_"
    return rf"(?<![{edge}])" + re.escape(value) + rf"(?![{edge}])"


def _cdm_names(text: str) -> frozenset[str]:
    """CDM table and column names the skeleton writes (as identifiers)."""
    from sqlglot.dialects.tsql import TSQL

    try:
        tokens = TSQL().tokenize(text)
    except SqlglotError:
        return frozenset({"<untokenizable>"})
    found = set()
    for token in tokens:
        if token.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            name = token.text.lower()
            if name in _TABLES or name in _COLUMNS:
                found.add(name)
    return frozenset(found)


def _case(value: str) -> str:
    if value == value.lower():
        return "lower"
    return "upper" if value == value.upper() else "mixed"


def _facts(holes: dict[str, str], names: frozenset[str]) -> tuple:
    """How the CDM schema, the holes' case and their sharing of values bear on a record."""
    refs = [(n, n) for n in sorted(names)] + [(f"@{h}", v.lower()) for h, v in holes.items()]
    schema = sorted(
        (t_ref, c_ref, _TABLES[t][c])
        for t_ref, t in refs
        if t in _TABLES
        for c_ref, c in refs
        if c in _TABLES[t]
    )
    kinds = tuple(
        (
            h,
            "number" if _NUMBER.fullmatch(v) else _case(v),
            tuple(sorted(g for g, w in holes.items() if w.lower() == v.lower())),
        )
        for h, v in holes.items()
    )
    return tuple(schema), kinds


# -- templates of readings --------------------------------------------------------------


def _forms(values: dict[str, str]) -> list[tuple[str, str, str]]:
    """(marker, hole, form) for every way a value can be written, longest first."""
    out = []
    for i, (hole, value) in enumerate(values.items()):
        for form in dict.fromkeys((value, value.lower(), value.upper())):
            kind = "=" if form == value else ("l" if form == value.lower() else "u")
            out.append((f"{_MARK}{i}{kind}{_MARK}", hole, form))
    return sorted(out, key=lambda m: -len(m[2]))


def _templated(text: str, values: dict[str, str]) -> str | None:
    if _MARK in text:
        return None
    for marker, _, form in _forms(values):
        text = re.sub(_word(form), marker, text)
    return text


def _filled(text: str, values: dict[str, str]) -> str:
    for i, value in enumerate(values.values()):
        text = (
            text.replace(f"{_MARK}{i}={_MARK}", value)
            .replace(f"{_MARK}{i}l{_MARK}", value.lower())
            .replace(f"{_MARK}{i}u{_MARK}", value.upper())
        )
    return text


def _map_texts(
    reading: tuple[tuple[str, ...], Transpiled | Drop],
    change: Callable[[str], str | None],
    quoted: Callable[[str], str | None],
) -> tuple | None:
    """``reading`` with ``change`` applied to its SQL and notes and ``quoted`` to the texts
    that quote SQL cut to a width (warnings, a drop's reason); None if any gives None."""
    notes, gold = reading
    new_notes = tuple(change(n) for n in notes)
    if isinstance(gold, Drop):
        reason = quoted(gold.reason)
        new_gold: Any = None if reason is None else replace(gold, reason=reason)
    else:
        sql = change(gold.sql)
        warnings = tuple(quoted(w) for w in gold.warnings)
        new_gold = (
            None if sql is None or None in warnings else replace(gold, sql=sql, warnings=warnings)
        )
    if new_gold is None or None in new_notes:
        return None
    return new_notes, new_gold


def _template(reading, values: dict[str, str]):
    """The reading with its holes' values marked; None where a value is in a text that
    quotes SQL cut to a width (its cut depends on the value's length)."""

    def quoted(text: str) -> str | None:
        marked = _templated(text, values)
        return None if marked is None or _MARK in marked else marked

    return _map_texts(reading, lambda text: _templated(text, values), quoted)


def _fill(reading, values: dict[str, str]):
    def fill(text: str) -> str:
        return _filled(text, values)

    return _map_texts(reading, fill, fill)
