"""A throwaway PostgreSQL server for the test session, from the installed server binaries.

``initdb`` and ``postgres`` refuse to run as root, so when the tests run as root the
server runs as the ``postgres`` system user, in a temporary folder that user owns.  It
listens on a free loopback port (and a unix socket in that folder), trusts nobody:
the superuser has a random password, so every connection is a real login.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SERVER_USER = "postgres"
SUPERUSER = "postgres"


def find_bindir() -> Path | None:
    """The folder of ``initdb``/``pg_ctl``: ``pg_config --bindir``, else the newest
    Debian server package, else None."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()
            candidates.append(Path(out))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresServer:
    """A running server: ``url`` logs in as the superuser to database ``postgres``."""

    bindir: Path
    root: Path
    port: int
    password: str
    run_as: str | None  # the system user running the server (None: this user)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def url(self, user: str = SUPERUSER, password: str | None = None, db: str = "postgres") -> str:
        secret = self.password if password is None else password
        return f"postgresql://{user}:{secret}@127.0.0.1:{self.port}/{db}"

    def _cmd(self, *args: str) -> list[str]:
        if self.run_as is None:
            return list(args)
        return ["runuser", "-u", self.run_as, "--", *args]

    def _run(self, *args: str, timeout: float = 120) -> None:
        done = subprocess.run(
            self._cmd(*args), capture_output=True, text=True, timeout=timeout, cwd=self.root
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{' '.join(args[:2])} failed ({done.returncode}): {done.stderr.strip()}\n{tail}"
            )

    def start(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        self._chown(pwfile)
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data_dir),
            "-U",
            SUPERUSER,
            "--auth=scram-sha-256",
            f"--pwfile={pwfile}",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        pwfile.unlink()
        options = " ".join(
            [
                f"-p {self.port}",
                f"-k {self.root}",
                "-c listen_addresses=127.0.0.1",
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
                "-c max_connections=60",
                "-c shared_buffers=64MB",
            ]
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data_dir),
            "-l",
            str(self.root / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(
                str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"
            )
        shutil.rmtree(self.root, ignore_errors=True)

    def _chown(self, path: Path) -> None:
        if self.run_as is not None:
            entry = pwd.getpwnam(self.run_as)
            os.chown(path, entry.pw_uid, entry.pw_gid)


def start_server() -> PostgresServer:
    """Start a fresh server; raise LookupError when the binaries are not installed."""
    bindir = find_bindir()
    if bindir is None:
        raise LookupError(
            "PostgreSQL server binaries not found (pg_config --bindir, /usr/lib/postgresql/*/bin);"
            " install them with `apt-get install -y postgresql`"
        )
    run_as = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise LookupError(
                f"running as root and there is no {SERVER_USER!r} system user to run the server"
            ) from None
        run_as = SERVER_USER
    root = Path(tempfile.mkdtemp(prefix="sqlgold-pg-"))
    server = PostgresServer(bindir, root, _free_port(), secrets.token_hex(16), run_as)
    server._chown(root)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server
