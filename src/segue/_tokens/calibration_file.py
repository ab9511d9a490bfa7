"""Persisting calibration under ``SEGUE_HOME/calibration.json``.

Writes are atomic (temp file in the same directory, fsync, ``os.replace``, fsync of the
directory) and read-modify-write is serialized across processes by a sidecar lock file that
is never unlinked. A damaged file is an error naming it, never silently reset: the user
decides whether to delete it.
"""

from __future__ import annotations

import json
from pathlib import Path

from filelock import FileLock
from filelock import Timeout as FileLockTimeout

from segue._errors import LockTimeout, StoreError
from segue._fsutil import atomic_write
from segue._tokens.calibration import Calibration, from_obj

FILENAME = "calibration.json"
_LOCK_TIMEOUT = 10.0


def path_for(home: Path) -> Path:
    return home / FILENAME


def load(home: Path) -> Calibration:
    """The stored calibration (empty when there is none yet)."""
    path = path_for(home)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Calibration()
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}", path=path) from None
    try:
        return from_obj(json.loads(data))
    except (ValueError, TypeError) as exc:
        raise StoreError(
            f"calibration file {path} is damaged ({exc}); delete it to start over", path=path
        ) from None


def record(home: Path, family: str, estimated: int, reported: int) -> Calibration:
    """Add one sample (provider-reported input tokens against segue's estimate) and save."""
    home.mkdir(parents=True, exist_ok=True)
    lock_path = home / (FILENAME + ".lock")
    try:
        with FileLock(lock_path, timeout=_LOCK_TIMEOUT):
            updated = load(home).record(family, estimated, reported)
            atomic_write(path_for(home), (json.dumps(updated.to_obj(), indent=2) + "\n").encode())
    except FileLockTimeout:
        raise LockTimeout(lock_path, _LOCK_TIMEOUT) from None
    return updated
