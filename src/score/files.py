"""Files written whole or not at all, and the sha256 of a file's bytes.

Every file sqlgold writes goes through :func:`replacing`: the bytes go to a temporary
file beside the target, which is renamed over it only once everything is written, so a
failure (a full disk, an error halfway, Ctrl-C) leaves the target as it was and no
temporary file behind.  :func:`write_atomic` writes a text or bytes that way;
:func:`write_all_atomic` writes several files so that either all are replaced or none.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> write_atomic(folder / "a.txt", "one\\n")
>>> (folder / "a.txt").read_text(), sorted(p.name for p in folder.iterdir())
('one\\n', ['a.txt'])
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path


def temporary_beside(path: Path) -> Path:
    """A temporary path in ``path``'s folder, unique to this process and thread."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


@contextmanager
def replacing(path: str | Path, *, make_parents: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write; when the block ends without an
    error it is renamed over ``path``, and in any case it is gone afterwards."""
    target = Path(path)
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_beside(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _write(tmp: Path, data: str | bytes, fsync: bool) -> None:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with tmp.open("wb") as f:
        f.write(raw)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


def write_atomic(
    path: str | Path, data: str | bytes, *, fsync: bool = False, make_parents: bool = True
) -> None:
    """Replace ``path`` with ``data`` (a text is written as UTF-8, newlines as given);
    ``fsync`` also waits until the bytes are on disk before the rename."""
    with replacing(path, make_parents=make_parents) as tmp:
        _write(tmp, data, fsync)


def write_all_atomic(files: Mapping[Path, str | bytes], *, fsync: bool = True) -> None:
    """Write several files so that either all are replaced or none is: every one goes to
    its temporary file first, and only when all are written are they renamed."""
    with ExitStack() as stack:
        temps = []
        for path, data in files.items():
            target = Path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = temporary_beside(target)
            stack.callback(tmp.unlink, missing_ok=True)
            _write(tmp, data, fsync)
            temps.append((tmp, target))
        for tmp, target in temps:
            os.replace(tmp, target)


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
