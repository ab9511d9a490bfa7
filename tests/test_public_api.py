"""The public surface is pinned: adding or removing a name is a deliberate act."""

from __future__ import annotations

import re
import subprocess
import sys

import segue

EXPECTED = {
    # the library's front door (segue.api): sessions, streaming, approval, history
    "Answer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApproverLike",
    "AssistantText",
    "Compacted",
    "Event",
    "EventSink",
    "History",
    "HistoryItem",
    "HistoryWindow",
    "ModelHistory",
    "NotFound",
    "Notice",
    "RolledOver",
    "SearchHit",
    "SettingsError",
    "StepUsage",
    "TaskFinished",
    "TaskInfo",
    "TaskStarted",
    "list_tasks",
    "ToolFinished",
    "ToolStarted",
    "TurnStream",
    "Warned",
    "open_history",
    "ContextSignal",
    # the errors a caller catches (SPEC.md §5: exit codes and their classes)
    "ContextOverflowError",
    "LockTimeout",
    "PluginError",
    "ProviderAuthError",
    "ProviderError",
    "RowDecodeError",
    "StoreError",
    "TransientProviderError",
    "TurnCancelled",
    "TurnPaused",
    "UnknownModelError",
    "WorkspaceNotFound",
    "Count",
    "HistoryStore",
    "InMemoryStore",
    "MaintainedStore",
    "Layout",
    "Part",
    "Provider",
    "ProviderRequest",
    "Row",
    "RuntimeFailure",
    "Session",
    "SessionConfig",
    "SessionHistoryTool",
    "StepResult",
    "TranscriptStore",
    "TurnResult",
    "Usage",
    "UsageError",
    "SegueError",
    "count_request",
    "count_text",
    "create_provider",
    "decode_row",
    "encode_row",
    "load_settings",
    "make_row",
    "open_session",
    "open_store",
    "resolve_agent",
    "resolve_model",
    "__version__",
}


def test_all_is_pinned() -> None:
    assert set(segue.__all__) == EXPECTED
    for name in segue.__all__:
        assert getattr(segue, name) is not None


def test_import_is_light() -> None:
    """Importing segue loads no provider SDK, no UI toolkit and no tokenizer data."""
    code = (
        "import sys, segue; "
        "heavy = [m for m in ('openai', 'anthropic', 'textual') if m in sys.modules]; "
        "from segue._tokens import encodings; "
        "print(heavy, encodings.loaded_names())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] ()"


def test_one_version_everywhere() -> None:
    """The version is written once: the installed metadata, ``segue.__version__`` and
    ``segue --version`` agree, and it looks like a release number."""
    from importlib.metadata import version

    assert re.fullmatch(r"\d+\.\d+\.\d+", segue.__version__)
    assert version("segue") == segue.__version__
    out = subprocess.run(
        [sys.executable, "-m", "segue", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"segue {segue.__version__}"
