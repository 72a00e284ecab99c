"""A release's test suite (``sqlgold publish --suite``): the suite built for the tasks
released is copied into the release as ``suite/`` (its manifest, its build report and
its variants' Parquet files, hashed in the release manifest like every other file), and
the dataset card explains test-suite accuracy and how to score with it.

The copy is a suite folder as ``sqlgold suite build`` wrote it, so
:func:`score.suite.suite_file.read_suite` reads it and ``sqlgold score run RELEASE
preds.jsonl --suite RELEASE/suite`` scores with it.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from score.files import file_sha256
from score.inputs.task_manifest import set_hash
from score.suite.suite_file import DATA, MANIFEST, Suite, check_suite_for, read_suite

#: The folder of a release that holds its suite.
SUITE_FOLDER = "suite"
#: What of a suite folder is released besides its data: the manifest and the build report.
SUITE_FILES = (MANIFEST, "report.json", "report.md")


def suite_for_release(
    folder: str | Path, tasks: Sequence[Mapping[str, Any]], fingerprint: str
) -> Suite:
    """The suite in ``folder``, its data checked, refused unless built for exactly these
    tasks on the database with ``fingerprint``."""
    suite = read_suite(folder)
    check_suite_for(suite, task_set_sha256=set_hash(tasks), base_fingerprint=fingerprint)
    return suite


def copy_suite(suite: Suite, release: Path) -> Path:
    """Copy ``suite`` into ``release/suite`` (its manifest, report and Parquet data)."""
    target = release / SUITE_FOLDER
    target.mkdir()
    for name in SUITE_FILES:
        if (suite.folder / name).is_file():
            shutil.copyfile(suite.folder / name, target / name)
    for path in sorted((suite.folder / DATA).rglob("*.parquet")):
        rel = path.relative_to(suite.folder)
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / rel)
    return target


def suite_manifest(suite: Suite) -> dict[str, Any]:
    """The release manifest's ``suite`` entry."""
    return {
        "folder": SUITE_FOLDER,
        "manifest_sha256": file_sha256(suite.folder / MANIFEST),
        "variants": [v.name for v in suite.variants],
        "dropped_tasks": sorted(suite.drops),
    }


def suite_card(suite: Suite | None) -> str:
    """The dataset card's section on the release's test suite ("" without one)."""
    if suite is None:
        return ""
    n = len(suite.variants)
    dropped = (
        f" The suite drops {len(suite.drops)} task(s) whose gold and reference answer "
        "disagree on a variant (one of them is wrong there); scoring judges each where the "
        "two agree: on the database above and on the variants the suite's manifest does not "
        "name for it (`differ_on`)."
        if suite.drops
        else ""
    )
    return f"""
### Test suite

Execution accuracy on one database accepts a wrong query that happens to return the \
gold's rows there. `{SUITE_FOLDER}/` holds a test suite built for these tasks: {n} small \
OMOP CDM database variant(s) (Parquet, the vocabulary shared) kept because they tell golds \
from near misses of them. Test-suite accuracy (TS; Zhong, Yu and Klein, EMNLP 2020) counts \
a prediction right only if its result is the gold's on the database above and on every \
variant, compared under the same rule.{dropped}

```bash
sqlgold score run <this folder> predictions.jsonl --out run/ --suite <this folder>/{SUITE_FOLDER}
```

reports TS beside EX. The variants are DuckDB databases made from the Parquet files on \
first use; with `--db` a PostgreSQL or Spark server, the base database is scored there and \
the variants locally with DuckDB.
"""
