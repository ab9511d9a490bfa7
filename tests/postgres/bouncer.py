"""A throwaway PgBouncer in transaction mode in front of the test cluster (cluster.py),
started the way the cluster is: a config under a temp dir, a unix socket, a free port, as
``nobody`` when run as root (PgBouncer refuses root), stopped when the run ends. Without
the ``pgbouncer`` binary (Debian: ``apt-get install pgbouncer``) the tests that need it are
skipped, except in CI, where ``.ci/run`` installs it and a missing one fails the run."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.postgres.cluster import Cluster, _free_port, cluster


def _binary() -> str | None:
    found = shutil.which("pgbouncer")
    if found:
        return found
    return "/usr/sbin/pgbouncer" if os.path.exists("/usr/sbin/pgbouncer") else None


@dataclass
class Bouncer:
    root: Path
    port: int
    proc: subprocess.Popen[bytes]

    def url(self, dbname: str) -> str:
        return f"postgresql://postgres@/{dbname}?host={self.root}&port={self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_bouncer(server: Cluster) -> Bouncer:
    binary = _binary()
    if binary is None:
        raise RuntimeError("no pgbouncer binary (apt-get install pgbouncer)")
    root = Path(tempfile.mkdtemp(prefix="segue-bouncer-", dir="/tmp"))
    port = _free_port()
    as_user = "nobody" if os.geteuid() == 0 else None
    conf = root / "pgbouncer.ini"
    conf.write_text(
        "[databases]\n"
        f"* = host={server.socket_dir} port={server.port} user=postgres\n"
        "[pgbouncer]\n"
        "listen_addr =\n"
        f"listen_port = {port}\n"
        f"unix_socket_dir = {root}\n"
        "auth_type = any\n"
        "pool_mode = transaction\n"
        "max_client_conn = 200\n"
        "default_pool_size = 4\n"  # fewer server connections than clients: they are shared
        "server_reset_query =\n"
        "ignore_startup_parameters = extra_float_digits,options\n"
        f"logfile = {root / 'log'}\n"
    )
    cmd = [binary, str(conf)]
    if as_user is not None:
        os.chmod(root, 0o755)
        shutil.chown(root, as_user)
        shutil.chown(conf, as_user)
        cmd = ["runuser", "-u", as_user, "--", *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    bouncer = Bouncer(root, port, proc)
    deadline = time.monotonic() + 30
    while not (root / f".s.PGSQL.{port}").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            err = proc.stderr.read().decode() if proc.stderr else ""
            bouncer.stop()
            raise RuntimeError(f"pgbouncer did not start: {err.strip()}")
        time.sleep(0.02)
    atexit.register(_shutdown, bouncer)
    return bouncer


def _shutdown(bouncer: Bouncer) -> None:
    bouncer.stop()
    shutil.rmtree(bouncer.root, ignore_errors=True)


_STATE: dict[str, Bouncer | str] = {}


@pytest.fixture
def bouncer() -> Bouncer:
    """The run's PgBouncer in front of the test cluster (started on first use)."""
    server = cluster()
    if not _STATE:
        try:
            _STATE["bouncer"] = start_bouncer(server)
        except (RuntimeError, OSError) as exc:
            _STATE["failed"] = str(exc)
    found = _STATE.get("bouncer")
    if not isinstance(found, Bouncer):
        message = f"PgBouncer unavailable: {_STATE.get('failed')}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI must run the PgBouncer tests)", pytrace=False)
        pytest.skip(message)
    return found
