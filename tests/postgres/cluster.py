"""A throwaway PostgreSQL cluster for the tests: initdb in a temp dir, a unix socket, a free
port, stopped when the test run ends.

PostgreSQL refuses to run as root, so as root the server runs as ``nobody`` (``runuser``).
The binaries are found on PATH or under ``/usr/lib/postgresql/*/bin`` (or only in
``SEGUE_TEST_PG_BINDIR`` when that is set). Without them the
PostgreSQL tests are skipped with a message, except in CI (``CI=true``), where a server that
cannot start fails the run: there, ``.ci/run`` installs it.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.needs import unavailable


def _bindir() -> Path | None:
    forced = os.environ.get("SEGUE_TEST_PG_BINDIR")  # where to look instead (tests of this)
    if forced is not None:
        return Path(forced) if (Path(forced) / "initdb").exists() else None
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    bindir: Path
    root: Path
    port: int
    as_user: str | None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.socket_dir}&port={self.port}"

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_user is not None:
            cmd = ["runuser", "-u", self.as_user, "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "start")

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def restart_immediate(self) -> None:
        """Crash-stop (no checkpoint, like a power cut for the server process) and start."""
        self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        self.start()

    def new_database(self) -> str:
        """The URL of a fresh, empty database."""
        name = "t_" + uuid.uuid4().hex[:12]
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


#: the run's cluster, or why it could not start (one attempt per run)
_STATE: dict[str, Cluster | str] = {}


def start_cluster(*, fsync: bool = False) -> Cluster:
    """A new cluster, stopped at exit. The tests run it with ``fsync = off`` (a crash of the
    server process still loses nothing: the OS keeps its page cache); benchmarks of durable
    appends turn fsync on."""
    bindir = _bindir()
    if bindir is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb) found")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise RuntimeError("psycopg is not installed (pip install 'segue[postgres]')") from None
    root = Path(tempfile.mkdtemp(prefix="segue-pg-", dir="/tmp"))
    as_user = "nobody" if os.geteuid() == 0 else None
    cluster = Cluster(bindir, root, _free_port(), as_user)
    cluster.socket_dir.mkdir()
    if as_user is not None:
        os.chmod(root, 0o755)
        shutil.chown(root, as_user)
        shutil.chown(cluster.socket_dir, as_user)
    cluster.run(
        "initdb", "-D", str(cluster.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
        "--locale=C.UTF-8", "-N",
    )
    conf = (
        f"port = {cluster.port}\nlisten_addresses = ''\n"
        f"unix_socket_directories = '{cluster.socket_dir}'\n"
        + ("" if fsync else "fsync = off\nfull_page_writes = off\n")
        + "max_connections = 60\n"
    )
    conf_path = cluster.data / "postgresql.conf"
    if as_user is not None:
        subprocess.run(
            ["runuser", "-u", as_user, "--", "sh", "-c", f"cat >> '{conf_path}'"],
            input=conf, text=True, check=True,
        )
    else:
        with conf_path.open("a") as f:
            f.write(conf)
    cluster.start()
    atexit.register(_shutdown, cluster)
    return cluster


def _shutdown(cluster: Cluster) -> None:
    cluster.stop()
    shutil.rmtree(cluster.root, ignore_errors=True)


def cluster() -> Cluster:
    """The run's cluster (started on first use), or a skip / a CI failure."""
    if not _STATE:
        try:
            _STATE["cluster"] = start_cluster()
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", None) or ""
            _STATE["failed"] = f"{exc} {detail}".strip()
    found = _STATE.get("cluster")
    if not isinstance(found, Cluster):
        message = f"PostgreSQL server unavailable: {_STATE.get('failed')}"
        unavailable(message + " (CI must run the PostgreSQL tests)")
    return found


@pytest.fixture
def pg_url() -> str:
    """A fresh database on the test cluster."""
    return cluster().new_database()


@pytest.fixture
def pg_cluster() -> Cluster:
    return cluster()

