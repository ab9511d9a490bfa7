"""A workspace's names on the server: its advisory lock key and its ``NOTIFY`` channel. Pure."""

from __future__ import annotations

import hashlib


def lock_key(workspace_id: str) -> int:
    """The advisory lock key of a workspace: the first 8 bytes of a SHA-256, signed (stable
    across processes, machines and PostgreSQL versions, unlike ``hashtext``)."""
    digest = hashlib.sha256(b"segue-workspace:" + workspace_id.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def notify_channel(workspace_id: str) -> str:
    """The ``LISTEN``/``NOTIFY`` channel of a workspace: an identifier derived from its lock
    key (a workspace id may hold characters no identifier may, and be longer than 63)."""
    return f"segue_ws_{lock_key(workspace_id) & 0xFFFF_FFFF_FFFF_FFFF:016x}"
