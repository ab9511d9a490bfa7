"""Remembered approvals of one workspace: ``SEGUE_HOME/approvals/<workspaceId>.json``.

The file is ``{"version": 1, "rules": [{"regex_match": "bash:git status( --short)?", "action":
"allow"}, ...], "mode": "auto-edit"}`` (``mode`` optional: the workspace's own approval mode).
Rules are ordered oldest first, so a rule added later wins where both match (R38 with R12's
last-match-wins). It may be edited by hand; answering "always" in the chat appends to it.

Invariants: a missing file is no rules; a malformed one is a one-line UsageError naming the
file, never silently ignored (a user's ``deny`` rule must not vanish). Writes are atomic and a
read-modify-write holds a lock file beside it, so two chats never lose each other's rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from filelock import FileLock

from segue._errors import UsageError
from segue._fsutil import atomic_write
from segue._policy.approval import MODES, ApprovalRule, Mode, parse_mode, rules_from_obj
from segue._workspace import Layout

VERSION = 1


def approvals_path(layout: Layout) -> Path:
    return layout.home / "approvals" / f"{layout.workspace_id}.json"


class ApprovalFile:
    """The remembered rules of one workspace, read fresh on every use."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of(cls, layout: Layout) -> ApprovalFile:
        return cls(approvals_path(layout))

    def _read(self) -> dict[str, Any] | None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise UsageError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise UsageError(f"{self.path} is not valid JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{self.path} must be a JSON object with a \"rules\" list")
        return obj

    def rules(self) -> tuple[ApprovalRule, ...]:
        obj = self._read()
        if obj is None:
            return ()
        try:
            return rules_from_obj(obj.get("rules", []))
        except UsageError as exc:
            raise UsageError(f"{self.path}: {exc.message}") from None

    def mode(self) -> Mode | None:
        """The workspace's own approval mode (``"mode"`` in the file), if it names one."""
        obj = self._read()
        if obj is None or "mode" not in obj:
            return None
        if not isinstance(obj["mode"], str):
            raise UsageError(f"{self.path}: \"mode\" must be one of {', '.join(MODES)}")
        try:
            return parse_mode(obj["mode"])
        except UsageError as exc:
            raise UsageError(f"{self.path}: {exc.message}") from None

    def add(self, new: ApprovalRule) -> None:
        """Append ``new`` (it wins over every earlier rule it overlaps)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=10, mode=0o600):
            data = self._read() or {}
            rules = [r for r in self.rules() if r != new] + [new]
            # Whatever else the file holds (its mode, keys a newer segue wrote) is kept.
            data.update(version=VERSION, rules=[r.to_obj() for r in rules])
            atomic_write(self.path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
