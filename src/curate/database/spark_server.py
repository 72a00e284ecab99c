"""A local Spark Connect server for users and tests (``make spark-up`` / ``spark-down``).

The server is the one the ``pyspark`` wheel ships (``pyspark/jars`` holds
``spark-connect_2.13``), started with the wheel's own ``spark-submit`` on ``local[2]``,
so it needs Java 17 and nothing from the network.  Its state lives in one folder:
the Parquet warehouse, the Derby metastore (so tables survive a restart), the log and
the pid file.

    python -m curate.database.spark_server start --port 15002 --dir .spark
    python -m curate.database.spark_server stop --dir .spark
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_PORT = 15002
DEFAULT_DIR = ".spark"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


class SparkServerError(Exception):
    """The local server could not be started or stopped."""


def java_available() -> bool:
    return shutil.which("java") is not None


def spark_home() -> Path:
    """The pyspark wheel's folder, which is a Spark distribution (bin/, jars/)."""
    try:
        import pyspark
    except ImportError:
        raise SparkServerError(
            "pyspark is not installed (install the extra: pip install -e '.[spark]')"
        ) from None
    home = Path(pyspark.__file__).parent
    if not any((home / "jars").glob("spark-connect_*.jar")):
        raise SparkServerError(f"no Spark Connect server jar in {home / 'jars'}")
    return home


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(
    port: int,
    folder: str | Path,
    *,
    memory: str = "2g",
    wait: float = 180.0,
    persistent: bool = True,
) -> int:
    """Start a server on ``port`` with its state in ``folder``; return its pid once it
    accepts connections.  Refuses when something already listens on the port.  With
    ``persistent`` the catalog is a Derby-backed Hive metastore in ``folder`` (tables
    survive a restart); otherwise it is in memory (faster DDL; tests use it)."""
    if not java_available():
        raise SparkServerError("java is not on PATH (Spark needs Java 17)")
    home = spark_home()
    state = Path(folder).resolve()
    state.mkdir(parents=True, exist_ok=True)
    if port_open(port):
        raise SparkServerError(f"port {port} is already in use (is a server running?)")
    metastore = state / "metastore_db"
    confs = {
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.warehouse.dir": str(state / "warehouse"),
        "spark.sql.catalogImplementation": "hive" if persistent else "in-memory",
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.ansi.enabled": "false",
    }
    if persistent:
        confs["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
            f"jdbc:derby:;databaseName={metastore};create=true"
        )
        confs["spark.driver.extraJavaOptions"] = f"-Dderby.system.home={state}"
    command = [str(home / "bin" / "spark-submit"), "--master", "local[2]"]
    command += ["--driver-memory", memory, "--class", CONNECT_CLASS]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOG_DIR=str(state))
    log = open(state / "server.log", "wb")  # noqa: SIM115 - handed to the child
    process = subprocess.Popen(
        command,
        cwd=state,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    (state / "server.pid").write_text(f"{process.pid}\n")
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SparkServerError(
                f"the server exited with status {process.returncode}; see {state / 'server.log'}"
            )
        if port_open(port):
            return process.pid
        time.sleep(0.5)
    stop(state)
    raise SparkServerError(f"the server did not listen on {port} within {wait:g} s")


def stop(folder: str | Path) -> bool:
    """Stop the server whose pid file is in ``folder``; False if none was running."""
    pid_file = Path(folder) / "server.pid"
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return False
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        pid_file.unlink(missing_ok=True)
        return False
    for _ in range(100):
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    pid_file.unlink(missing_ok=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spark_server", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--port", type=int, default=int(os.environ.get("SPARK_PORT", DEFAULT_PORT)))
    parser.add_argument("--dir", default=DEFAULT_DIR, help="state folder (default .spark)")
    args = parser.parse_args(argv)
    try:
        if args.action == "start":
            pid = start(args.port, args.dir)
            url = f"sc://localhost:{args.port}"
            print(f"Spark Connect server pid {pid} at {url} (state {args.dir})")
        elif stop(args.dir):
            print("Spark Connect server stopped")
        else:
            print("no Spark Connect server was running")
    except SparkServerError as e:
        print(f"error: [spark] {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
