"""What the root command resolves for every subcommand: home, workspace and store."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from segue._workspace import (
    Layout,
    default_home,
    default_workspace_id,
    validate_workspace_id,
)

if TYPE_CHECKING:
    from segue._history.protocol import MaintainedStore


@dataclass(frozen=True)
class CliContext:
    home: Path
    workspace_id: str
    #: ``--store`` as given (None: the ``store.url`` setting, else the JSONL files)
    store_option: str | None = None

    @property
    def store_url(self) -> str | None:
        """The PostgreSQL URL holding the transcripts, or None for the JSONL files."""
        if self.store_option is not None:
            return self.store_option
        try:
            os.lstat(self.home / "settings.json")
        except FileNotFoundError:
            return None  # no settings file: every default, and store.url's is None
        from segue._settings import load_settings, settings_path

        value = load_settings(settings_path(self.home)).get("store.url")
        return value if isinstance(value, str) else None

    def store(self, *, durable: bool = True) -> MaintainedStore:
        import click

        from segue._stores import open_store

        store = open_store(self.layout, self.store_url, durable=durable)
        # its connections (PostgreSQL) are given back when the command ends, not when the
        # store happens to be collected: a process running many commands keeps none open
        click_ctx = click.get_current_context(silent=True)
        if click_ctx is not None:
            click_ctx.call_on_close(store.close)
        return store

    def workspace_exists(self) -> bool:
        """Whether the workspace has ever been written (creates nothing): its session folder
        under the home, or for PostgreSQL a first write (an epoch)."""
        url = self.store_url
        if url is None:
            from segue._workspaces import workspace_exists

            return workspace_exists(self.layout)
        from segue.postgres._store import PostgresStore

        store = PostgresStore(url, self.workspace_id)
        try:
            return store.epoch() != ""
        finally:
            store.close()

    def existing_store(self) -> MaintainedStore:
        """The store, for a command that only reads: WorkspaceNotFound (exit 1, one line)
        when the workspace does not exist, instead of showing an empty transcript."""
        self.require_workspace()
        return self.store()

    def note_earlier_workspace(self) -> None:
        """Before a conversation starts in the repository root's new workspace: a note on
        stderr naming the workspace this folder used before (its transcript is kept there)."""
        if self.store_url is not None:
            return
        from segue._workspaces import earlier_workspace

        earlier = earlier_workspace(self.layout)
        if earlier is not None:
            import click  # not at the top: the fast path of `history search` runs without it

            click.echo(
                f"segue: note: starting workspace {self.workspace_id} (this repository's); "
                f"this folder's earlier conversation is in workspace {earlier}: continue it "
                f"with `segue -w {earlier} …`",
                err=True,
            )

    def require_workspace(self) -> None:
        if not self.workspace_exists():
            from segue._workspaces import missing_workspace

            raise missing_workspace(self.layout)

    @property
    def layout(self) -> Layout:
        return Layout(self.home, self.workspace_id)


def resolve(home: Path | None, workspace_id: str | None, store_option: str | None) -> CliContext:
    """What the global options (``--home``, ``-w``, ``--store``) name, defaults filled in;
    UsageError for a bad workspace id or store URL. The root command and the fast path of
    ``segue history search`` both resolve through here."""
    wid = workspace_id if workspace_id is not None else default_workspace_id(Path.cwd())
    validate_workspace_id(wid)
    if store_option is not None:
        from segue._stores import check_store_url

        check_store_url(store_option)
    return CliContext(
        home=home if home is not None else default_home(),
        workspace_id=wid,
        store_option=store_option,
    )
