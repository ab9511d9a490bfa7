"""Library tests: a scripted model file and reading back what a session wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from segue._messages import Row, decode_row


def script(path: Path, *responses: dict[str, Any], window: int = 16000) -> str:
    """``scripted:PATH`` replaying ``responses``."""
    path.write_text(
        json.dumps({"contextWindow": window, "encoding": "o200k_base",
                    "responses": list(responses)}),
        encoding="utf-8",
    )
    return f"scripted:{path}"


def bash(command: str, text: str = "") -> dict[str, Any]:
    return {"text": text, "toolCalls": [{"name": "bash", "input": {"command": command}}]}


def rows(home: Path, workspace: str) -> list[Row]:
    chat = home / "sessions" / workspace / "chat.jsonl"
    return [decode_row(line) for line in chat.read_bytes().splitlines() if line.strip()]


def tool_outputs(home: Path, workspace: str) -> list[Any]:
    """The output of every tool call in the transcript, oldest first."""
    return [part.output for row in rows(home, workspace) for part in row.parts
            if part.toolName is not None]
