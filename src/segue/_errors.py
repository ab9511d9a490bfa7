"""One exception tree for segue.

Three families are kept apart: control-flow signals (the engine decided not to go on),
developer misuse, and runtime failures. Every error carries structured fields so the
command line can turn it into one clear line and an exit code.

Two audiences, two wordings: ``message`` (and ``str(exc)``) speaks to a Python caller and
never names a command-line flag or command; where the remedy reads differently on the
command line (``-m MODEL``, ``segue settings set KEY``), the raise site also gives
``cli=``, kept in ``cli_message``, which is what the command line prints.

    SegueError
    ├── UsageError                  developer or user misuse (bad argument, bad id)
    │   ├── InvalidWorkspaceId
    │   ├── UnknownModelError
    │   ├── TrajectoryFormatError   a recorded agent run that cannot be converted to rows
    │   └── PluginError             a plugin that cannot load or breaks its hook contract
    ├── ContextSignal               the engine stopped on purpose (exit 3 at the CLI)
    │   ├── RolloverBlocked
    │   ├── StaleWindow             another send rolled the window over under this one (R33)
    │   ├── RequestRejected         preflight: cannot fit even a fresh window (R16)
    │   ├── TurnPaused
    │   ├── TurnCancelled           the caller cancelled (Ctrl-C); settled results stay durable
    │   └── CompactionFailed        no usable summary; nothing was committed
    └── RuntimeFailure              something outside the caller's control failed
        ├── FileError               a path segue cannot use safely: not a regular file,
        │                           a link, no access, no space left (names the path)
        ├── WorkspaceNotFound       a read of a workspace the home does not have
        ├── StoreError              transcript store failures
        │   ├── LockTimeout         names the lock path
        │   ├── RowDecodeError      a line that is not a row
        │   ├── ReceiptError
        │   └── StreamInProgress    a Xum stream may be writing this session: segue stays out
        ├── EncodingError           a tokenizer file missing/tampered, or encode failed
        ├── DemoFailed              `segue demo` could not show what it demonstrates
        └── ProviderError
            ├── ContextOverflowError
            ├── ProviderAuthError   the provider refused the key; names the env var to set
            ├── TransientProviderError  429/5xx/connection: retried with backoff, then raised
            └── ScriptExhausted     the scripted provider has no response left
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class SegueError(Exception):
    """Base of every error segue raises on purpose."""

    code: str = "error"

    def __init__(self, message: str, *, code: str | None = None, cli: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: The same error in the command line's words (flags, commands); ``message`` if none.
        self.cli_message = cli if cli is not None else message
        if code is not None:
            self.code = code


class UsageError(SegueError):
    code = "usage"


class MissingSetup(UsageError):
    """What the machine lacks, not what the command said: an API key not exported, an
    optional extra not installed. The command line exits 1 for it (SPEC.md §5: 2 is for bad
    usage), and a library caller still catches it as a UsageError."""

    code = "missing_setup"


class InvalidWorkspaceId(UsageError):
    code = "invalid_workspace_id"

    def __init__(self, workspace_id: str) -> None:
        super().__init__(
            f"invalid workspace id {workspace_id!r}: use 1-64 characters from [A-Za-z0-9._-]"
        )
        self.workspace_id = workspace_id


class UnknownModelError(UsageError):
    code = "unknown_model"

    def __init__(self, model: str, hint: str = "", *, cli_hint: str | None = None) -> None:
        head = f"unknown model {model!r}"
        super().__init__(
            head + (f": {hint}" if hint else ""),
            cli=head + f": {cli_hint}" if cli_hint is not None else None,
        )
        self.model = model


class TrajectoryFormatError(UsageError):
    code = "bad_trajectory"


class PluginError(UsageError):
    """A configured plugin failed to load, or a hook broke its contract (wrong return type,
    a sandboxed plugin registering unrestricted middleware)."""

    code = "plugin"

    def __init__(self, message: str, *, plugin: str | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin


class UnknownAgentError(UsageError):
    code = "unknown_agent"

    def __init__(self, name: str, available: Sequence[str], referenced_by: str | None = None):
        where = f" (the base of {referenced_by})" if referenced_by else ""
        choices = ", ".join(available) if available else "none"
        super().__init__(f"unknown agent {name!r}{where}; available agents: {choices}")
        self.name = name


class AgentDefinitionError(UsageError):
    code = "bad_agent"

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"agent definition {source}: {message}")
        self.source = source


class SettingsError(UsageError):
    code = "bad_settings"

    def __init__(self, message: str, *, path: Path | None = None, key: str | None = None):
        super().__init__(message)
        self.path = path
        self.key = key


class ScriptError(UsageError):
    code = "bad_script"

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(f"scripted provider file {path}: {message}")
        self.path = path


class ContextSignal(SegueError):
    """The engine stopped a turn on purpose; the CLI exits 3."""

    code = "context"


class RolloverBlocked(ContextSignal):
    code = "rollover_blocked"


class StaleWindow(ContextSignal):
    """A send prepared against a window that another send has since rolled over (R33)."""

    code = "stale_window"


class RequestRejected(ContextSignal):
    code = "request_rejected"


class TurnPaused(ContextSignal):
    code = "paused"


class TurnCancelled(ContextSignal):
    code = "cancelled"


class CompactionFailed(ContextSignal):
    code = "compaction_failed"


class RuntimeFailure(SegueError):
    code = "runtime"


class FileError(RuntimeFailure):
    """A file segue must read or write is unusable: a directory, FIFO, device or symbolic
    link where a regular file belongs, too large, not accessible, or on a full or read-only
    disk. The message names the path and what is wrong."""

    code = "file"

    def __init__(self, message: str, *, path: Path | None = None, errno: int | None = None):
        super().__init__(message)
        self.path = path
        self.errno = errno


class WorkspaceNotFound(RuntimeFailure):
    """A command that only reads named a workspace that was never written (a misspelt
    ``-w``): said in one line instead of showing an empty transcript."""

    code = "workspace_not_found"

    def __init__(self, message: str, *, workspace_id: str, home: Path) -> None:
        super().__init__(message)
        self.workspace_id = workspace_id
        self.home = home


class StoreError(RuntimeFailure):
    code = "store"

    def __init__(self, message: str, *, path: Path | None = None, code: str | None = None):
        super().__init__(message, code=code)
        self.path = path


class LockTimeout(StoreError):
    code = "lock_timeout"

    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__(f"timed out after {timeout:g}s waiting for lock {path}", path=path)
        self.timeout = timeout


class RowDecodeError(StoreError):
    code = "bad_row"


class ReceiptError(StoreError):
    code = "bad_receipt"


class StreamInProgress(StoreError):
    """The session directory holds a ``partial.json`` newer than its transcript: Xum may be
    streaming a reply into it right now, so segue refuses to change anything there."""

    code = "stream_in_progress"

    def __init__(self, session_dir: Path) -> None:
        head = (
            f"{session_dir} has a partial.json newer than its transcript (a Xum stream may be "
            "in progress); segue will not change this session. "
        )
        super().__init__(
            head + "Reading it is safe (segue.open_history), or wait until Xum has finished",
            path=session_dir,
        )
        self.cli_message = (
            head + "Read it with `segue history`, or wait until Xum has finished"
        )


class EncodingError(RuntimeFailure):
    code = "encoding"


class DemoFailed(RuntimeFailure):
    """The demo's own checks failed (fewer rollovers, nothing recovered, replay off script)."""

    code = "demo_failed"


class ProviderError(RuntimeFailure):
    code = "provider"


class ContextOverflowError(ProviderError):
    code = "context_overflow"


class ProviderAuthError(ProviderError):
    code = "provider_auth"

    def __init__(self, message: str, *, env_var: str | None) -> None:
        super().__init__(message)
        self.env_var = env_var


class TransientProviderError(ProviderError):
    """A failure worth trying again (rate limit, overload, server error, lost connection)."""

    code = "provider_transient"

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        #: Seconds the provider asked us to wait (Retry-After), if it said.
        self.retry_after = retry_after


class ScriptExhausted(ProviderError):
    code = "script_exhausted"

    def __init__(self, message: str, *, path: Path, steps: int) -> None:
        super().__init__(message)
        self.path = path
        self.steps = steps
