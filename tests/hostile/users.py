"""Running segue as a user without permission overrides.

``runuser -u nobody`` where the interpreter and its packages are readable by nobody; where
they are not (an interpreter under root's home), root with the override capabilities dropped
(``setpriv``: no CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH or CAP_FOWNER), which the kernel then
checks exactly like an ordinary user's access to files it does not own."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.hostile.harness import env

NOBODY = 65534
_CAPS = "-dac_override,-dac_read_search,-fowner"


@functools.cache
def unprivileged() -> tuple[str, ...] | None:
    """A command prefix, or None when there is no way to drop the overrides here."""
    probe = [sys.executable, "-c", "import segue._cli.main, msgspec, click"]
    candidates: list[tuple[str, ...]] = []
    if os.geteuid() == 0 and shutil.which("runuser"):
        candidates.append(("runuser", "-u", "nobody", "--"))
    if os.geteuid() == 0 and shutil.which("setpriv"):
        candidates.append(("setpriv", f"--inh-caps={_CAPS}", f"--bounding-set={_CAPS}"))
    for prefix in candidates:
        try:
            done = subprocess.run(
                [*prefix, *probe], check=False, capture_output=True, env=env(), timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return prefix
    return None


def owner_for_foreign_files() -> int:
    """A uid the unprivileged runner is not: nobody for setpriv (root stays uid 0), root for
    runuser (the runner is nobody)."""
    prefix = unprivileged()
    return 0 if prefix is not None and prefix[0] == "runuser" else NOBODY


def give_to_runner(root: Path) -> None:
    """Make ``root`` the unprivileged runner's own (it already is for setpriv: uid 0)."""
    prefix = unprivileged()
    if prefix is not None and prefix[0] == "runuser":
        subprocess.run(["chown", "-R", str(NOBODY), str(root)], check=True)
