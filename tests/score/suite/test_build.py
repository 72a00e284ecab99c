"""``sqlgold suite build`` on planted cases, on the real test database: what one database
cannot tell apart, the suite does; a gold that agrees with its reference answer only on
the base database is caught; the same input gives the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from curate.cli import main
from score.suite.build import BuildSettings, build_suite
from score.suite.suite_file import read_suite
from tests.task_factory import make_task, write_task_file

BOUNDARY = "SELECT count(*) AS n FROM cdm.person WHERE year_of_birth >= 1900"
AT_LEAST = "SELECT count(*) AS n FROM cdm.person WHERE year_of_birth >= 1930"
TOP3 = "SELECT person_id FROM cdm.person ORDER BY year_of_birth, person_id LIMIT 3"
RXNORM = (
    "SELECT count(*) AS n FROM cdm.drug_exposure d "
    "JOIN cdm.concept c ON c.concept_id = d.drug_concept_id "
    "WHERE c.vocabulary_id = 'RxNorm' AND d.drug_type_concept_id = 38000177 "
    "AND d.drug_exposure_start_date < '1948-04-18'"
)

#: every 'Clinical Drug' of the embedded vocabulary is an RxNorm one: only a local
#: concept (a copy in another vocabulary) tells the gold from its vocabulary filter dropped
CLINICAL_DRUG = (
    "SELECT count(*) AS n FROM cdm.drug_exposure d "
    "JOIN cdm.concept c ON c.concept_id = d.drug_concept_id "
    "WHERE c.vocabulary_id = 'RxNorm' AND c.concept_class_id = 'Clinical Drug'"
)


def _tasks() -> list[dict]:
    boundary = make_task("t-boundary", BOUNDARY)
    boundary["answer_sql"] = "SELECT count(*) AS n FROM cdm.person"  # same on the base only
    boundary["answer_dialect"] = "duckdb"
    # the same gold asked again, with a reference answer that is right everywhere
    again = make_task("t-boundary-again", BOUNDARY)
    again["answer_sql"] = (
        "SELECT count(person_id) AS n FROM cdm.person WHERE NOT year_of_birth < 1900"
    )
    again["answer_dialect"] = "duckdb"
    return [
        boundary,
        make_task("t-at-least", AT_LEAST),
        make_task("t-top3", TOP3),
        make_task("t-rxnorm", RXNORM),
        make_task("t-clinical-drug", CLINICAL_DRUG),
        again,
    ]


@pytest.fixture(scope="module")
def built(omop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("suite") / "suite"
    report = build_suite(
        _tasks(), omop_db, out, BuildSettings(max_candidates=40, max_databases=10, jobs=2)
    )
    return out, report


def _neighbour_fate(report: dict, task_id: str, sql: str) -> str:
    task = next(t for t in report["tasks"] if t["id"] == task_id)
    if sql in task["killed_by"]:
        return "killed by " + task["killed_by"][sql]
    if any(n["sql"] == sql for n in task["indistinguishable"]):
        return "alive"
    return "told apart on the base database"


def test_the_base_database_alone_accepts_what_the_suite_tells_apart(built) -> None:
    _, report = built
    strict = "SELECT COUNT(*) AS n FROM cdm.person WHERE year_of_birth > 1930"
    assert _neighbour_fate(report, "t-at-least", strict).startswith("killed by v")
    dropped = (
        "SELECT COUNT(*) AS n FROM cdm.drug_exposure AS d JOIN cdm.concept AS c "
        "ON c.concept_id = d.drug_concept_id WHERE d.drug_type_concept_id = 38000177 "
        "AND d.drug_exposure_start_date < '1948-04-18'"
    )
    assert _neighbour_fate(report, "t-rxnorm", dropped).startswith("killed by v")
    limit4 = TOP3.replace("LIMIT 3", "LIMIT 4").replace("person_id FROM", "person_id FROM")
    assert _neighbour_fate(report, "t-top3", limit4) != "alive"
    s = report["near_miss_survival"]
    assert s["correct_with_suite"] < s["correct_on_base"]


def test_a_filter_the_base_vocabulary_cannot_miss_is_told_apart_on_a_local_concept(
    built, omop_db: Path
) -> None:
    out, report = built
    dropped = (
        "SELECT COUNT(*) AS n FROM cdm.drug_exposure AS d JOIN cdm.concept AS c "
        "ON c.concept_id = d.drug_concept_id WHERE c.concept_class_id = 'Clinical Drug'"
    )
    con = duckdb.connect(str(omop_db), read_only=True)
    try:
        same = con.execute(CLINICAL_DRUG).fetchall() == con.execute(dropped).fetchall()
        assert con.execute("SELECT max(concept_id) FROM cdm.concept").fetchall()[0][0] < 2e9
    finally:
        con.close()
    assert same  # the base database cannot tell them apart
    assert _neighbour_fate(report, "t-clinical-drug", dropped).startswith("killed by v")
    vocabulary = pq.read_table(out / "data" / "vocabulary" / "concept.parquet").to_pylist()
    local = [c for c in vocabulary if c["concept_id"] > 2_000_000_000]
    assert any(
        c["concept_class_id"] == "Clinical Drug" and c["vocabulary_id"] != "RxNorm" for c in local
    )


def test_a_gold_that_agrees_with_its_reference_only_on_the_base_is_caught(built) -> None:
    out, report = built
    assert "t-boundary" in report["drops"]
    assert "reference answer" in report["drops"]["t-boundary"]
    suite = read_suite(out)
    assert "t-boundary" in suite.drops
    assert set(suite.drops) == {"t-boundary"}
    # one of the two is wrong where they differ: a near miss told apart there is not
    # told apart, and scoring judges the task's answers on the other variants alone
    assert suite.differ_on["t-boundary"]
    assert set(suite.differ_on["t-boundary"]) <= {v.name for v in suite.variants}
    task = next(t for t in report["tasks"] if t["id"] == "t-boundary")
    assert not set(task["killed_by"].values()) & set(suite.differ_on["t-boundary"])
    assert not any(suite.judges("t-boundary", v) for v in suite.differ_on["t-boundary"])
    # the gold asked again ran once, and its own reference answer is judged on its own
    again = next(t for t in report["tasks"] if t["id"] == "t-boundary-again")
    assert again == {"id": "t-boundary-again", "same_gold_as": "t-boundary"}


def test_the_manifest_names_each_variant_and_what_it_was_built_for(built, omop_db) -> None:
    out, report = built
    suite = read_suite(out)
    assert 1 <= len(suite.variants) <= 10
    assert [v.name for v in suite.variants] == [v["name"] for v in report["variants"]]
    assert all(len(v.sha256) == 64 and len(v.fingerprint) == 64 for v in suite.variants)
    assert (out / "report.md").read_text(encoding="utf-8").startswith("# Test suite")


def test_every_kill_names_a_kept_variant_that_tells_it_apart(built) -> None:
    """After the last cover (which may drop variants and rename the others), the
    variants are v01... in order, and each near miss the report credits to one is told
    apart from its gold on that variant's own data."""
    from score.suite.suite_file import variant_files, write_duckdb

    out, report = built
    suite = read_suite(out)
    names = [v.name for v in suite.variants]
    assert names == [f"v{n:02d}" for n in range(1, len(names) + 1)]
    assert sorted(p.name for p in (out / "data").iterdir()) == sorted([*names, "vocabulary"])
    gold_of = {t["id"]: t["gold_sql"] for t in _tasks()}
    checked = 0
    for task in report["tasks"]:
        for sql, by in task.get("killed_by", {}).items():  # not a gold asked again
            assert by in names, (task["id"], by)
            database = out.parent / f"{by}-check.duckdb"
            if not database.exists():
                write_duckdb(database, variant_files(out, by))
            con = duckdb.connect(str(database), read_only=True)
            try:
                gold = sorted(con.sql(gold_of[task["id"]]).fetchall(), key=repr)
                near = sorted(con.sql(sql).fetchall(), key=repr)
            finally:
                con.close()
            assert gold != near, (task["id"], by, sql)
            checked += 1
    assert checked


def test_the_same_tasks_base_and_seed_give_the_same_bytes(omop_db: Path, tmp_path: Path) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl", _tasks()[:1])
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        result = CliRunner().invoke(
            main,
            [
                "suite",
                "build",
                str(tasks),
                "--out",
                str(out),
                "--db",
                str(omop_db),
                "--max-candidates",
                "8",
                "-q",
            ],
        )
        assert result.exit_code == 0, result.output
        assert "with the suite" in result.output
        outs.append(out)
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert files and files == sorted(
        p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file()
    )
    for rel in files:
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel
    manifest = json.loads((outs[0] / "suite.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["max_candidates"] == 8


def test_a_server_url_or_a_folder_that_is_not_a_suite_is_refused(omop_db, tmp_path) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl", _tasks()[:1])
    url = CliRunner().invoke(
        main, ["suite", "build", str(tasks), "--out", str(tmp_path / "s"), "--db", "sc://h:1"]
    )
    assert url.exit_code == 2 and "DuckDB file only" in url.output
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine", encoding="utf-8")
    refused = CliRunner().invoke(
        main,
        [
            "suite",
            "build",
            str(tasks),
            "--out",
            str(other),
            "--db",
            str(omop_db),
            "--max-candidates",
            "2",
            "-q",
        ],
    )
    assert refused.exit_code == 1 and "holds no suite" in refused.output
    assert (other / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "tasks.jsonl"]


def test_a_candidate_goes_beside_the_first_open_variant_it_fits(monkeypatch) -> None:
    """Candidates of tasks a and b mask each other's kills side by side: b's goes beside
    c's instead, and one that fits beside none is refused (the caller closes one)."""
    from score.suite import open_variant as ov

    class Trial:
        def load(self, tables) -> None:
            self.tables = tables

    monkeypatch.setattr(ov, "arrow_tables", lambda rows, schemas: rows)
    monkeypatch.setattr(
        ov, "_still_kills", lambda trial, tasks, kills, found, profile: not {"a", "b"} <= tasks
    )
    rows = {"person": [{"person_id": 1}]}
    blocks = [ov.OpenVariant(), ov.OpenVariant(), ov.OpenVariant()]
    blocks[0].add(rows, "a", [("a", 0)], 0)
    blocks[1].add(rows, "c", [("c", 0)], 1)
    assert ov.place(Trial(), blocks, rows, "b", [("b", 0)], 2, {}, {}, "sqlgold") is blocks[1]
    assert blocks[0].tasks == {"a"} and blocks[0].last == 0
    assert blocks[1].tasks == {"c", "b"} and blocks[1].kills == {("c", 0), ("b", 0)}
    assert blocks[1].last == 2 and len(blocks[1].rows["person"]) == 2  # side by side
    assert blocks[2].rows is None
    monkeypatch.setattr(ov, "_still_kills", lambda *args: False)
    assert ov.place(Trial(), blocks, rows, "d", [("d", 0)], 3, {}, {}, "sqlgold") is None
    assert all(b.last != 3 for b in blocks)


#: no CDM holds a person born after 3000 and before 1000: any answer that returns nothing
#: scores correct on this gold, on the base database and on every variant
NOWHERE = "SELECT person_id FROM cdm.person WHERE year_of_birth > 3000 AND year_of_birth < 1000"


def test_golds_that_return_no_row_anywhere_are_named_and_warned_of(omop_db, tmp_path) -> None:
    tasks = write_task_file(
        tmp_path / "tasks.jsonl",
        [make_task("t-nowhere", NOWHERE), make_task("t-twin", NOWHERE), _tasks()[1]],
    )
    out = tmp_path / "suite"
    args = ["suite", "build", str(tasks), "--out", str(out), "--db", str(omop_db)]
    result = CliRunner().invoke(main, [*args, "--max-candidates", "12", "-q"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    reach = report["reach"]
    assert reach["tasks_empty_everywhere"] == ["t-nowhere", "t-twin"]
    assert (reach["distinct_golds"], reach["distinct_golds_empty_everywhere"]) == (2, 1)
    by_id = {t["id"]: t for t in report["tasks"]}
    assert by_id["t-twin"] == {"id": "t-twin", "same_gold_as": "t-nowhere"}  # run once
    survivors = sum(1 for n in by_id["t-nowhere"]["indistinguishable"] if not n.get("equivalent"))
    assert survivors > 0 and reach["near_misses_unjudged"] == survivors
    assert reach["unjudged_share"] == survivors / reach["near_misses"]
    assert "warning: [suite] the suite cannot judge" in result.stderr
    assert "t-nowhere" in (out / "report.md").read_text(encoding="utf-8")
    assert result.stdout.count("reach ") == 1


#: a person of a CDM with 64-bit keys (TEXT-TO-OMOP's golds name such ids); the embedded
#: database's person_id is a 32-bit INTEGER
BIG_PERSON = (
    "SELECT person_id, year_of_birth FROM cdm.person WHERE person_id = 296377155196858 "
    "ORDER BY year_of_birth"
)


def test_a_gold_naming_a_64_bit_person_finds_that_person_on_a_variant(omop_db, tmp_path):
    out = tmp_path / "suite"
    report = build_suite(
        [make_task("t-big", BIG_PERSON)], omop_db, out, BuildSettings(max_candidates=30)
    )
    (task,) = report["tasks"]
    assert task["gold_rows_on_base"] == 0 and any(task["gold_rows_on_variants"])
    assert report["reach"]["tasks_empty_everywhere"] == []
    held = [pq.read_table(v.folder / "person.parquet") for v in read_suite(out).variants]
    assert all(t.schema.field("person_id").type == "int64" for t in held)
    assert any(296377155196858 in t.column("person_id").to_pylist() for t in held)


def test_rows_whose_value_fits_no_column_of_its_type_are_refused_by_name() -> None:
    """A candidate holding such a value is left out by the build (it goes on)."""
    import pyarrow as pa

    from score.suite.variant_data import RowsDoNotFit, arrow_tables

    schema = pa.schema([("person_id", pa.int64()), ("year_of_birth", pa.int32())])
    fits = arrow_tables(
        {"person": [{"person_id": 2**62, "year_of_birth": 1950}]}, {"person": schema}
    )
    assert fits["person"].num_rows == 1
    with pytest.raises(RowsDoNotFit, match="table person"):
        arrow_tables({"person": [{"person_id": 1, "year_of_birth": 2**40}]}, {"person": schema})


#: golds as TEXT-TO-OMOP writes them, for a CDM other than the embedded one: a 64-bit
#: person, a time of day, a day computed from today, a person's third result, a row's own
#: id, hours after today's midnight
OTHER_CDM = {
    "t-clock": "SELECT m.measurement_concept_id FROM cdm.measurement AS m "
    "WHERE m.person_id = 68000916618747607 AND CAST(m.measurement_datetime AS TIME) = '02:18:31'",
    "t-made-day": "SELECT v.visit_start_date FROM cdm.visit_occurrence AS v "
    "WHERE v.person_id = 189712018321 AND v.visit_start_date = "
    "MAKE_DATE(CAST(EXTRACT(YEAR FROM CURRENT_DATE) AS INT) - 1, 11, 3)",
    "t-third": "SELECT m.value_as_number FROM cdm.measurement AS m "
    "WHERE m.person_id = 3720242571871 AND m.measurement_concept_id = 3025315 "
    "ORDER BY m.measurement_datetime, m.value_as_number LIMIT 1 OFFSET 2",
    "t-own-id": "SELECT de.device_concept_id FROM cdm.device_exposure AS de "
    "WHERE de.device_exposure_id = 45768171",
    "t-hours": "SELECT de.device_concept_id FROM cdm.device_exposure AS de "
    "WHERE de.device_exposure_start_datetime >= CURRENT_DATE + INTERVAL '3' HOURS "
    "AND de.device_exposure_start_datetime < CURRENT_DATE + INTERVAL '10' HOURS",
}


def test_golds_written_for_another_cdm_return_rows_on_a_variant(omop_db, tmp_path) -> None:
    tasks = []
    for tid, sql in OTHER_CDM.items():
        task = make_task(tid, sql)
        task["today"] = "2026-01-01"
        tasks.append(task)
    report = build_suite(tasks, omop_db, tmp_path / "suite", BuildSettings(max_candidates=90))
    rows = {t["id"]: (t["gold_rows_on_base"], t["gold_rows_on_variants"]) for t in report["tasks"]}
    assert all(on_base == 0 for on_base, _ in rows.values())
    assert {tid for tid, (_, on) in rows.items() if any(on)} == set(OTHER_CDM), rows
    assert report["reach"]["tasks_empty_everywhere"] == []


#: an ICU stay, as TEXT-TO-OMOP asks for one: the embedded database holds no visit detail
#: and no concept named so
ICU = (
    "SELECT vd.visit_detail_id, de.drug_concept_id FROM cdm.visit_detail AS vd "
    "JOIN cdm.concept AS c ON vd.visit_detail_concept_id = c.concept_id "
    "JOIN cdm.drug_exposure AS de ON de.visit_detail_id = vd.visit_detail_id "
    "WHERE c.concept_name ILIKE '%intensive care%' ORDER BY 1, 2"
)


def test_a_gold_reading_visit_details_the_base_lacks_finds_an_icu_stay(omop_db, tmp_path):
    report = build_suite(
        [make_task("t-icu", ICU)], omop_db, tmp_path / "s", BuildSettings(max_candidates=40)
    )
    (task,) = report["tasks"]
    assert task["gold_rows_on_base"] == 0 and any(task["gold_rows_on_variants"]), task
    suite = read_suite(tmp_path / "s")
    names = pq.read_table(tmp_path / "s" / "data" / "vocabulary" / "concept.parquet")
    assert "intensive care" in names.column("concept_name").to_pylist()
    details = [pq.read_table(v.folder / "visit_detail.parquet") for v in suite.variants]
    visits = [pq.read_table(v.folder / "visit_occurrence.parquet") for v in suite.variants]
    for detail, visit in zip(details, visits, strict=True):  # each within a visit
        assert set(detail.column("visit_occurrence_id").to_pylist()) <= set(
            visit.column("visit_occurrence_id").to_pylist()
        )


#: MALE's class and domain are both 'Gender': a near miss returning its domain in place of
#: its class returns the gold's result wherever the vocabulary is the base database's
CLASS_AND_DOMAIN = (
    "SELECT concept_id, concept_class_id, domain_id FROM cdm.concept WHERE concept_id = 8507"
)
DOMAIN_TWICE = "SELECT concept_id, domain_id, domain_id FROM cdm.concept WHERE concept_id = 8507"


def test_a_near_miss_bound_to_the_vocabulary_is_told_apart_by_a_vocabulary_variant(
    omop_db, tmp_path
) -> None:
    from score.execution.executor import Executor
    from score.scoring.run import ScoringOptions, run_scoring
    from score.suite.suite_file import variant_files

    tasks = [
        make_task(
            "t-class",
            CLASS_AND_DOMAIN,
            expect=((8507, "Gender", "Gender"),),
            columns=("concept_id", "concept_class_id", "domain_id"),
            types=("INTEGER", "VARCHAR", "VARCHAR"),
        )
    ]
    tasks.append(make_task("t-at-least", AT_LEAST))  # a clinical variant is kept first
    out = tmp_path / "suite"
    report = build_suite(tasks, omop_db, out, BuildSettings(max_candidates=20, max_databases=6))
    fate = _neighbour_fate(report, "t-class", DOMAIN_TWICE)
    assert fate.startswith("killed by v"), fate
    suite = read_suite(out)
    by_name = {v.name: v for v in suite.variants}
    killer = by_name[fate.removeprefix("killed by ")]
    assert killer.own_vocabulary and not suite.variants[0].own_vocabulary
    files = variant_files(out, killer.name)
    assert killer.folder / "concept.parquet" in files
    assert out / "data" / "vocabulary" / "concept.parquet" not in files
    # it differs from the first variant in its vocabulary alone
    first = suite.variants[0]
    assert pq.read_table(killer.folder / "person.parquet") == pq.read_table(
        first.folder / "person.parquet"
    )
    # scored as a model's answers: the near miss is told apart there, the gold's own
    # text is right on the first variant and every vocabulary variant
    tasks_path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        json.dumps({"task_id": "t-class", "language": "en", "sql": DOMAIN_TWICE}) + "\n",
        encoding="utf-8",
    )
    with Executor(omop_db) as ex:
        run_scoring(
            tasks_path,
            preds,
            tmp_path / "run",
            ex,
            ScoringOptions(split="all", cache_dir=tmp_path / "cache", suite=out),
        )
    (record,) = [
        json.loads(line)
        for line in (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["task_id"] == "t-class"
    ]
    assert record["base_correct"] is True and record["outcome"] == "mismatch"
    assert record["suite"]["told_apart_by"] == killer.name
