"""What the root command resolves for every subcommand: home and workspace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from segue.workspace import Layout


@dataclass(frozen=True)
class CliContext:
    home: Path
    workspace_id: str

    @property
    def layout(self) -> Layout:
        return Layout(self.home, self.workspace_id)
