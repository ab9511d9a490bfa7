"""``segue store init URL`` and ``segue history migrate --to URL|DIR`` (SPEC.md §8)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from segue._errors import UsageError
from segue._workspace import Layout, validate_workspace_id

if TYPE_CHECKING:
    from segue._cli.context import CliContext
    from segue.postgres._migrate import MigrateReport


def _is_url(text: str) -> bool:
    return text.startswith(("postgresql://", "postgres://"))


@click.group("store")
def store_group() -> None:
    """Set up a shared PostgreSQL store (select it with `segue --store URL` or the
    store.url setting)."""


@store_group.command("init")
@click.argument("url")
def init_cmd(url: str) -> None:
    """Create segue's tables in the database URL names (no extension is needed), or migrate
    them to this version (idempotent; done on first use otherwise)."""
    if not _is_url(url):
        raise UsageError(f"expected a postgresql:// URL, not {url!r}")
    from segue.postgres._derive import stale
    from segue.postgres._schema import connect, ensure_schema, redact
    from segue.postgres._store import PostgresStore

    conn = connect(url)
    try:
        version = ensure_schema(conn)
        behind = stale(conn)
    finally:
        conn.close()
    # rows another version of segue derived the agent's columns of: derived again here, so
    # session_history answers at once (a workspace at a time, under its lock)
    for workspace in behind:
        with PostgresStore(url, workspace) as store:
            store.rederive()
    click.echo(f"PostgreSQL store {redact(url)} ready (schema version {version})")


@click.command("migrate")
@click.option(
    "--to",
    "target",
    required=True,
    metavar="URL|DIR",
    help="Where to copy the workspace: a postgresql:// URL, or a segue home directory.",
)
@click.option(
    "-w", "--workspace", "workspace_id", default=None, help="Workspace id (default: -w before "
    "the command, or the current directory's)."
)
@click.pass_obj
def migrate_cmd(obj: CliContext, target: str, workspace_id: str | None) -> None:
    """Copy this workspace's transcript to another store, byte for byte, and verify the copy.

    From the JSONL files (the home) to PostgreSQL, or from PostgreSQL (`--store URL`) to a
    home directory's JSONL files. The target workspace must be empty; the source is left as
    it is.
    """
    from segue.postgres._migrate import jsonl_to_postgres, postgres_to_jsonl

    wid = validate_workspace_id(workspace_id) if workspace_id is not None else obj.workspace_id
    source_url = obj.store_url
    report: MigrateReport
    if source_url is None:
        if not _is_url(target):
            raise UsageError(
                "from the JSONL store, --to must be a postgresql:// URL (use --store URL to "
                "migrate out of PostgreSQL)"
            )
        report = jsonl_to_postgres(Layout(obj.home, wid), target)
    else:
        if _is_url(target):
            raise UsageError("from a PostgreSQL store, --to must be a segue home directory")
        report = postgres_to_jsonl(source_url, Layout(Path(target), wid))
    click.echo(
        f"Migrated workspace {wid}: {report.lines} line(s) ({report.archive_lines} archived), "
        f"next sequence {report.next_sequence}; verified (sha256 archive "
        f"{report.sha256['archive'][:12]}…, chat {report.sha256['chat'][:12]}…)"
    )
