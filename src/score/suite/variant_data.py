"""One database variant's clinical rows: small, consistent, colliding.

Made in foreign-key order from a seeded random generator: persons, each person's
observation period (sometimes a second one after a gap), their visits, the events of
each visit table, eras and deaths, each event inside one of its person's observation
periods (the first, or for some persons either) and after the start of its visit, a
death at the start of the last period or later, or on the day of one of the person's
events.  Half the variants hold twins (:mod:`score.suite.twins`): rows that tie where
a gold breaks a tie, and half hold pairs (:mod:`score.suite.pairs`): persons with two
events of the gold's concepts a span it names apart, a day more or less.  Rows are
stored in a shuffled order, not in id order, and in half the variants their ids run in a
shuffled order too (not the persons').  Each column takes its values from a
*palette*: one to three values of its pool (:mod:`score.suite.value_pool`) chosen for
this variant, so GROUP BY, DISTINCT and joins collide; a nullable column is NULL in a
share of rows chosen for the variant.  The same pools, schemas and seed give the same
rows.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from score.cdm.schema import CDM_TABLES
from score.suite.crowd import add_crowd
from score.suite.focus import READS
from score.suite.pairs import PAIRS, add_named_pairs
from score.suite.palette import Palette, clock
from score.suite.row_ids import next_id, renumber
from score.suite.twins import TWINS, add_twins
from score.suite.value_pool import COUNTS, PERSONS, SPANS

Row = dict[str, Any]

#: visit-level event tables: (table, its start date column, its end date column or None)
EVENT_TABLES = (
    ("condition_occurrence", "condition_start_date", "condition_end_date"),
    ("drug_exposure", "drug_exposure_start_date", "drug_exposure_end_date"),
    ("procedure_occurrence", "procedure_date", "procedure_end_date"),
    ("measurement", "measurement_date", None),
    ("observation", "observation_date", None),
    ("device_exposure", "device_exposure_start_date", "device_exposure_end_date"),
    ("specimen", "specimen_date", None),
    ("note", "note_date", None),
)
#: person-level era tables: (table, start, end, the event table and concept column it sums)
ERA_TABLES = (
    ("condition_era", "condition_era_start_date", "condition_era_end_date"),
    ("drug_era", "drug_era_start_date", "drug_era_end_date"),
    ("dose_era", "dose_era_start_date", "dose_era_end_date"),
)
#: the tables a variant may hold twins of: (table, concept column, date columns)
_TWIN_TABLES = tuple(
    (t, "drug_concept_id" if t == "dose_era" else f"{t.split('_')[0]}_concept_id", (s, e))
    for t, s, e in (
        ("visit_occurrence", "visit_start_date", "visit_end_date"),
        *EVENT_TABLES,
        *ERA_TABLES,
    )
    if t not in ("note", "specimen")
)
_SPANS = (0, 0, 1, 7, 30, 365)
#: events more of a person a gold names (it asks for their second-to-last visit: OFFSET 1)
NAMED_MORE = (0, 2, 4)
#: the share of persons with a second observation period (after a gap)
SECOND_PERIOD = 0.3
#: the share of the persons who died with a second DEATH record (the CDM declares no key on
#: DEATH, and CDMs in use keep every record: counting them and counting persons differ)
SECOND_DEATH = 0.2
#: the share of persons with two periods whose events fall in both (else in the first)
LATER_EVENTS = 0.5
_DEFAULT_DAY = dt.date(2015, 6, 15)


def _cols(table: str) -> list[tuple[str, str, bool]]:
    return list(CDM_TABLES[table])


def _required(table: str, column: str) -> bool:
    return any(name == column and required for name, _, required in CDM_TABLES[table])


def _day(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return _DEFAULT_DAY


def _fill(table: str, row: Row, palette: Palette) -> Row:
    """The columns ``row`` does not set yet, from the palette (NULL for ids of empty
    tables: provider, care site, visit detail)."""
    for name, dtype, required in _cols(table):
        if name in row:
            continue
        if name.endswith("_datetime"):
            day = row.get(name.replace("_datetime", "_date"))
            row[name] = (
                dt.datetime.combine(day, clock(palette, table, name))
                if isinstance(day, dt.date)
                else None
            )
            continue
        if name in (
            "provider_id",
            "care_site_id",
            "visit_detail_id",
            "preceding_visit_occurrence_id",
        ) and not palette.focus.get((table, name)):  # ids of tables left empty
            row[name] = None if not required else 0
            continue
        row[name] = palette.pick(table, name, required)
        if row[name] is None and required:
            row[name] = (
                0 if dtype in ("INTEGER", "DOUBLE") else (_DEFAULT_DAY if dtype == "DATE" else "")
            )
    return row


def _clamp(day: dt.date, first: dt.date, last: dt.date) -> dt.date:
    return min(max(day, first), last)


def variant_rows(
    pools: Mapping[tuple[str, str], Sequence[Any]],
    tables: Sequence[str],
    seed: str,
    focus: Mapping[tuple[str, str], Sequence[Any]] | None = None,
    exact: float = 0.0,
) -> dict[str, list[Row]]:
    """The rows of every table in ``tables`` (clinical tables the base database fills),
    for the variant named by ``seed``, its palettes led by ``focus`` (see
    :class:`Palette`)."""
    rng = random.Random(seed)
    palette = Palette(rng, pools, focus, exact)
    out: dict[str, list[Row]] = {t: [] for t in tables}
    wanted = set(tables)
    people = rng.choice((3, 6, 10, 16, 24))
    counts = {
        t: rng.choice(((0, 1), (1, 2), (0, 1, 2, 3), (1,), (2, 3, 4))) for t, _, _ in EVENT_TABLES
    }
    # eras of a person: now and then several (one era meeting two of another concept)
    counts.update({t: rng.choice(((0, 1, 2), (0, 1, 2), (2, 3, 4))) for t, _, _ in ERA_TABLES})
    named_counts = tuple((focus or {}).get(COUNTS, ()))
    if named_counts:  # the per-person counts a gold compares with, for a table it reads
        per_person = [t for t, _, _ in (*EVENT_TABLES, *ERA_TABLES)]
        read = [t for t in per_person if any(k[0] == t for k in focus or {})]
        table = rng.choice(read or [t for t, _, _ in EVENT_TABLES])
        counts[table] = named_counts
        counts["visit_occurrence"] = named_counts
        if rng.random() < 0.5:  # as many concepts as the count (COUNT(DISTINCT ...) >= 5)
            palette.widen(table, f"{table.split('_')[0]}_concept_id", max(named_counts))
    named_spans = tuple((focus or {}).get(SPANS, ()))
    spans = _SPANS + named_spans
    # a gold names a number of days: every date of a person that far from one anchor
    anchored = bool(named_spans) and rng.random() < 0.5
    offsets = (0, *named_spans)
    focus_days = sorted(
        _day(v) for values in (focus or {}).values() for v in values if isinstance(v, dt.date)
    )
    locations = [r for r in palette.values("location", "location_id") if r is not None]
    if "location" in wanted:
        for location_id in sorted(set(locations)) or [1]:
            out["location"].append(_fill("location", {"location_id": location_id}, palette))
    # visit details only for a gold that reads them (a base database may hold none)
    detailed = "visit_detail" in wanted and "visit_detail" in set((focus or {}).get(READS, ()))
    named = [  # the person ids a gold names come first (it asks about that person)
        int(v)
        for key, values in (focus or {}).items()
        if key[1] == "person_id"
        for v in values
        if isinstance(v, int) and 0 < v < 2**63
    ]
    ids = list(dict.fromkeys(named))[:people]
    ids += [i for i in range(1, people + 1) if i not in ids][: people - len(ids)]
    for person_id in ids:
        asked_for = person_id in named  # a person the gold names: more of their events
        person = _fill("person", {"person_id": person_id}, palette)
        if person.get("location_id") is not None and locations:
            person["location_id"] = rng.choice(locations)
        born = (focus or {}).get(("person", "birth_datetime"))
        if born and rng.random() < 0.7:  # a gold compares the birth date: on either side
            day = _day(rng.choice(list(born)))
            person.update(year_of_birth=day.year, month_of_birth=day.month, day_of_birth=day.day)
        try:
            person["birth_datetime"] = dt.datetime(
                int(person.get("year_of_birth") or 1960),
                int(person.get("month_of_birth") or 1),
                int(person.get("day_of_birth") or 1),
            )
        except (ValueError, TypeError):
            person["birth_datetime"] = None
        out["person"].append(person)
        # the observation period first: every date of the person is drawn inside it
        a = _day(palette.pick("observation_period", "observation_period_start_date", True))
        b = _day(palette.pick("observation_period", "observation_period_end_date", True))
        first, last = min(a, b), max(a, b)
        if focus_days and rng.random() < 0.8:  # the period holds the days a gold names
            first, last = min(first, focus_days[0]), max(last, focus_days[-1])
        if rng.random() < 0.5:
            first -= dt.timedelta(days=rng.choice((1, 365, 3650)))
            last += dt.timedelta(days=rng.choice((1, 365, 3650)))
        if named_spans and rng.random() < 0.5:  # a period as long as a span a gold names
            last = first + dt.timedelta(days=rng.choice(named_spans))
        if named_spans and person["birth_datetime"] and rng.random() < 0.2:
            # observed from birth, or a span a gold names after it (birth + 30 days)
            first = person["birth_datetime"].date() + dt.timedelta(days=rng.choice(offsets))
            last = max(last, first)
        anchor = _day(palette.pick("visit_occurrence", "visit_start_date", True))
        periods = [(first, last)]
        if rng.random() < SECOND_PERIOD:  # a later one, after a gap
            later = last + dt.timedelta(days=rng.choice((30, 365)))
            # as long as the first, now and then: a person twice among periods of one length
            length = last - first if rng.random() < 0.3 else dt.timedelta(rng.choice(spans))
            periods.append((later, later + length))
        # events in the later period too, for some persons: a gold that compares an event
        # with the end of the person's last period (or first) meets events past the first
        lived = periods if len(periods) > 1 and rng.random() < LATER_EVENTS else periods[:1]

        def when(
            table: str,
            column: str,
            anchor: dt.date = anchor,
            lived: list[tuple[dt.date, dt.date]] = lived,
        ) -> dt.date:
            """A date for ``table.column`` inside one of the periods that hold the
            person's events: from the palette, or, in an anchored variant, the anchor
            shifted by a span a gold names."""
            start, end = rng.choice(lived) if len(lived) > 1 else lived[0]
            if anchored:
                return _clamp(anchor + dt.timedelta(days=rng.choice(offsets)), start, end)
            return _clamp(_day(palette.pick(table, column, True)), start, end)

        if "observation_period" in wanted:
            for start, end in periods:
                out["observation_period"].append(
                    _fill(
                        "observation_period",
                        {
                            "observation_period_id": len(out["observation_period"]) + 1,
                            "person_id": person_id,
                            "observation_period_start_date": start,
                            "observation_period_end_date": end,
                        },
                        palette,
                    )
                )
        visits: list[Row] = []
        if "visit_occurrence" in wanted:
            more = rng.choice(NAMED_MORE) if asked_for else 0
            for _ in range(rng.choice(counts.get("visit_occurrence", (0, 1, 1, 2, 3))) + more):
                start = when("visit_occurrence", "visit_start_date")
                _, period_end = next(p for p in periods if p[0] <= start <= p[1])
                end = min(start + dt.timedelta(days=rng.choice(spans)), period_end)
                ends = (focus or {}).get(("visit_occurrence", "visit_end_date"))
                if ends and rng.random() < 0.5:  # a gold compares the end: a day it names
                    named_end = _day(rng.choice(list(ends)))
                    if start <= named_end <= period_end:
                        end = named_end
                visit = _fill(
                    "visit_occurrence",
                    {
                        "visit_occurrence_id": len(out["visit_occurrence"]) + 1,
                        "person_id": person_id,
                        "visit_start_date": start,
                        "visit_end_date": end,
                    },
                    palette,
                )
                visits.append(visit)
                out["visit_occurrence"].append(visit)
        details = _visit_details(out, visits, palette, spans, asked_for) if detailed else {}
        days: list[dt.date] = []  # the person's event days
        for table, start_col, end_col in EVENT_TABLES:
            if table not in wanted:
                continue
            more = rng.choice(NAMED_MORE) if asked_for else 0
            for _ in range(rng.choice(counts[table]) + more):
                start = when(table, start_col)
                row: Row = {
                    f"{table}_id": next_id(out[table], table, focus),
                    "person_id": person_id,
                }
                if any(c == "visit_occurrence_id" for c, _, _ in _cols(table)):
                    before = [v for v in visits if v["visit_start_date"] <= start]
                    row["visit_occurrence_id"] = (
                        rng.choice(before)["visit_occurrence_id"] if before else None
                    )
                if details and any(c == "visit_detail_id" for c, _, _ in _cols(table)):
                    visit_id = row.get("visit_occurrence_id")
                    within = details.get(visit_id, []) if visit_id is not None else []
                    row["visit_detail_id"] = (
                        rng.choice(within)["visit_detail_id"] if within else None
                    )
                row[start_col] = start
                if end_col:
                    optional = not _required(table, end_col)
                    picked = palette.pick(table, end_col, False)
                    end = (
                        _day(picked)
                        if picked is not None and _day(picked) >= start
                        else start + dt.timedelta(days=rng.choice(spans))
                    )
                    row[end_col] = None if optional and rng.random() < 0.2 else end
                out[table].append(_fill(table, row, palette))
                days.append(start)
        for table, start_col, end_col in ERA_TABLES:
            if table not in wanted:
                continue
            for _ in range(rng.choice(counts.get(table, (0, 1, 2)))):
                start = when(table, start_col)
                end = start + dt.timedelta(days=rng.choice(spans))
                row = {f"{table}_id": len(out[table]) + 1, "person_id": person_id}
                row.update({start_col: start, end_col: end})
                out[table].append(_fill(table, row, palette))
        if "death" in wanted and rng.random() < 0.3:
            picked = when("death", "death_date") if anchored else None
            picked = picked or _day(palette.pick("death", "death_date", True))
            died = max(picked, periods[-1][0])
            if days and len(periods) == 1 and rng.random() < 0.5:
                # the day of one of the person's events: an event on the day of death,
                # and others after it (as real data has them), tell < from <= and a
                # test of the death date from none
                died = rng.choice(days)
            out["death"].append(
                _fill("death", {"person_id": person_id, "death_date": died}, palette)
            )
            if rng.random() < SECOND_DEATH:  # DEATH declares no key: a CDM may hold two
                again = _fill("death", {"person_id": person_id, "death_date": died}, palette)
                out["death"].append(again)
    crowds = tuple((focus or {}).get(PERSONS, ()))
    if crowds and rng.random() < 0.5:  # a gold counts persons: that many on one concept
        _crowd(out, palette, focus or {}, rng.choice(crowds), rng)
    if rng.random() < PAIRS:  # two events of a person, a span apart or a day off
        add_named_pairs(
            out,
            focus or {},
            named_spans,
            [
                ("visit_occurrence", "visit_start_date", "visit_end_date"),
                *EVENT_TABLES,
                *ERA_TABLES,
            ],
            lambda t: [c for c, _, _ in _cols(t)],
            lambda t, r: _fill(t, r, palette),
            rng,
        )
    if rng.random() < TWINS:  # rows that tie where the gold breaks a tie
        read = set((focus or {}).get(READS, ()))
        add_twins(
            out,
            [(t, c, d) for t, c, d in _TWIN_TABLES if t in out and (t in read or not read)],
            lambda t, c: palette.pools.get((t, c)) or [],
            lambda t, c: (focus or {}).get((t, c)) or [],
            rng,
            lambda t, r: _fill(t, r, palette),
        )
    if rng.random() < 0.5:
        renumber(out, rng)
    for table in sorted(out):
        # rows stored out of id order: a query that leans on the order rows were written
        # in (a tie broken by nothing, or by a column constant in its partition) is told
        # apart from one that breaks the tie by the id
        rng.shuffle(out[table])
    return out


def _visit_details(
    out: dict[str, list[Row]],
    visits: Sequence[Row],
    palette: Palette,
    spans: Sequence[int],
    named: bool,
) -> dict[int, list[Row]]:
    """A person's visit details (an ICU stay within an admission): none to two per visit
    (more for a person a gold names), each within its visit, of the visit's type unless
    the palette says another; visit id -> its details."""
    rng = palette.rng
    found: dict[int, list[Row]] = {}
    for visit in visits:
        first, last = visit["visit_start_date"], visit["visit_end_date"]
        more = rng.choice(NAMED_MORE[:2]) if named else 0
        for _ in range(rng.choice((0, 1, 1, 2)) + more):
            start = first + dt.timedelta(days=rng.randint(0, (last - first).days))
            end = min(start + dt.timedelta(days=rng.choice(spans)), last)
            row = _fill(
                "visit_detail",
                {
                    "visit_detail_id": next_id(out["visit_detail"], "visit_detail", palette.focus),
                    "person_id": visit["person_id"],
                    "visit_detail_start_date": start,
                    "visit_detail_end_date": end,
                    "visit_occurrence_id": visit["visit_occurrence_id"],
                },
                palette,
            )
            if not row.get("visit_detail_type_concept_id"):
                row["visit_detail_type_concept_id"] = visit.get("visit_type_concept_id") or 0
            out["visit_detail"].append(row)
            found.setdefault(visit["visit_occurrence_id"], []).append(row)
    return found


def _crowd(
    out: dict[str, list[Row]],
    palette: Palette,
    focus: Mapping[tuple[str, str], Sequence[Any]],
    size: int,
    rng: random.Random,
) -> None:
    """A crowd (:mod:`score.suite.crowd`) of ``size`` persons on the first concept of
    the palette of an event table the gold reads."""
    read = [(t, s) for t, s, _ in EVENT_TABLES if t in out and any(k[0] == t for k in focus)]
    if not read or "person" not in out or "observation_period" not in out:
        return
    table, start = rng.choice(read)
    column = f"{table.split('_')[0]}_concept_id"
    values = palette.values(table, column) if any(c == column for c, _, _ in _cols(table)) else []
    if values:
        add_crowd(out, table, column, values[0], size, start, lambda t, r: _fill(t, r, palette))


def arrow_tables(
    rows: Mapping[str, list[Row]], schemas: Mapping[str, pa.Schema]
) -> dict[str, pa.Table]:
    """Each table's rows as a pyarrow table with the base database's column types
    (:class:`RowsDoNotFit` when a value does not fit its column's type)."""
    out = {}
    for table, table_rows in rows.items():
        try:
            out[table] = pa.Table.from_pylist(
                [{name: r.get(name) for name in schemas[table].names} for r in table_rows],
                schema=schemas[table],
            )
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
            raise RowsDoNotFit(f"a value of table {table} does not fit its type: {e}") from e
    return out


class RowsDoNotFit(ValueError):
    """A candidate's rows hold a value its column's type cannot (a gold's constant too
    large for it): the candidate is left out, the build goes on."""
