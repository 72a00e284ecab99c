"""Task files already validated against the task schema, remembered by their content.

Validating every task of a file with jsonschema costs about 0.3 ms a task (0.4 s for a
file of 1,239 tasks): on a warm rescoring, the largest part of the time outside the
queries. A benchmark's task file is scored again and again, unchanged, so a file whose
every task passed is remembered, and the same bytes under the same schema are not
validated again.

The memo is kept in the user's cache folder (``task-files`` there:
:func:`score.defaults.cache_root`), whatever a scoring's gold cache, and curation writes
into it the task file it validated as it wrote it, so a curated file is validated once.
The key is the sha256 of the file's bytes, of the task schema's own file, and of the
task format versions this sqlgold reads: an edited task, a changed schema or another
sqlgold each validate again. Only the schema check is skipped: the format version,
duplicate ids and the set hash are checked on every read. An entry is an empty file
``<cache>/task-files/<key>``, written by rename; a folder that cannot be written is no
error (the file is then validated on every read).
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from score.defaults import cache_root
from score.files import file_sha256, write_atomic
from score.inputs.schemas import schema_path
from score.inputs.task_file import TASK_FORMAT_VERSIONS

MEMO_FORMAT = "sqlgold.validated-task-file/1"

#: The memo's folder inside the user's cache folder.
MEMO_FOLDER = "task-files"


class ValidatedFiles:
    """The task files (by content) whose every task passed the task schema; by default
    in the user's cache folder, ``directory`` None keeps none."""

    def __init__(self, directory: str | Path | None = MEMO_FOLDER) -> None:
        if directory == MEMO_FOLDER:
            directory = cache_root() / MEMO_FOLDER
        self.directory = Path(directory) if directory is not None else None

    def key(self, content_sha256: str) -> str:
        schema = file_sha256(schema_path("task"))
        versions = ",".join(sorted(TASK_FORMAT_VERSIONS))
        text = f"{MEMO_FORMAT}\n{schema}\n{versions}\n{content_sha256}"
        return hashlib.sha256(text.encode()).hexdigest()

    def known(self, content_sha256: str) -> bool:
        """Whether a file with these bytes was validated whole under this schema."""
        if self.directory is None:
            return False
        return (self.directory / self.key(content_sha256)).is_file()

    def remember(self, content_sha256: str) -> None:
        """Note that a file with these bytes passed (best effort)."""
        if self.directory is None:
            return
        with contextlib.suppress(OSError):
            write_atomic(self.directory / self.key(content_sha256), b"")
