"""Shared by the command-line tests: a scripted model file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def script(tmp: Path, responses: list[dict[str, Any]], *, window: int = 8000) -> str:
    """A scripted model string for ``responses``."""
    path = tmp / "script.json"
    path.write_text(
        json.dumps({"contextWindow": window, "encoding": "o200k_base", "responses": responses})
    )
    return f"scripted:{path}"
