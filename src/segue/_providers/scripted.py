"""The scripted provider: an offline model that replays a JSON script (SPEC.md §5).

Every test and the demo run through it, so it behaves like a strict fake, not a forgiving
mock (openai-agents' ScriptedModel): each step plays the next entry of the script; running out
is a :class:`~segue._errors.ScriptExhausted` error naming the file and how many responses it has;
an error entry raises the provider error it names. See :mod:`segue._providers.script` for the
file format.

* **Usage.** A response without ``usage`` reports what it really cost: the input tokens of the
  request it received and the output tokens of its own reply (counted as a one-message
  request), both with a :data:`~segue._providers.base.RequestCounter`: by default
  :func:`segue._tokens.count_request` with the script's encoding, the very count the engine's
  guards use, so reported usage and preflight agree to the token. Tests may inject another.
* **requestLog.** Every request received (also one that then fails or finds the script
  exhausted) is appended to the log as one JSON line ``{"system", "messages", "tools"}`` in the
  form of :func:`~segue._providers.request.request_to_obj`, with one ``write`` on an
  ``O_APPEND`` descriptor, so lines from several processes never interleave.
* **Position.** Which entry comes next is kept by a :class:`ScriptPosition`: in memory for one
  process (the default), or in a state file (:class:`FilePosition`) so that successive
  ``segue run`` invocations continue the same script. The command line keeps one state
  directory per workspace (``SEGUE_HOME/providers/<workspace>/``), so a script is one
  conversation per workspace; a state file is keyed by the script's path and content
  (editing the script starts it over) and names the script it belongs to.
  :func:`forget_positions` starts every script of a directory over (``segue clear --yes``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Protocol

from filelock import FileLock
from filelock import Timeout as FileLockTimeout

from segue._errors import (
    ContextOverflowError,
    LockTimeout,
    ProviderError,
    ScriptError,
    ScriptExhausted,
)
from segue._fsutil import atomic_write
from segue._messages import Part, encode_obj, make_row, text_part
from segue._providers.base import (
    EventSink,
    RequestCounter,
    StepResult,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from segue._providers.request import ProviderRequest, ToolCall, request_to_obj
from segue._providers.script import Script, ScriptedError, ScriptedResponse, parse_script
from segue._tokens import count_request

#: Streamed text arrives in pieces of this many characters, so consumers of events are
#: exercised with more than one delta.
DELTA_CHARS = 32
LOCK_TIMEOUT_SECONDS = 10.0
_STATE_PREFIX = "scripted-"


class ScriptPosition(Protocol):
    def take(self) -> int:
        """The 0-based index of the entry to play now; advances the position."""
        ...


class MemoryPosition:
    def __init__(self) -> None:
        self._next = 0

    def take(self) -> int:
        index = self._next
        self._next += 1
        return index


class FilePosition:
    """A position kept in a small JSON file, advanced under a lock (cross-process).

    The file is ``{"script": PATH, "next": N}``: ``script`` only says, to a person looking,
    which script the number belongs to; ``next`` is the 0-based entry to play now."""

    def __init__(self, path: Path, script: Path | None = None) -> None:
        self.path = path
        self.script = script

    def take(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            with FileLock(lock_path, timeout=LOCK_TIMEOUT_SECONDS):
                index = self._read()
                state: dict[str, object] = {"next": index + 1}
                if self.script is not None:
                    state = {"script": str(self.script), **state}
                atomic_write(self.path, json.dumps(state).encode("utf-8") + b"\n")
                return index
        except FileLockTimeout:
            raise LockTimeout(lock_path, LOCK_TIMEOUT_SECONDS) from None

    def _read(self) -> int:
        try:
            obj = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as exc:
            raise ProviderError(f"scripted provider state {self.path} is unreadable ({exc}); "
                                "delete it to start the script over") from None
        value = obj.get("next") if isinstance(obj, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ProviderError(f"scripted provider state {self.path} is malformed; "
                                "delete it to start the script over")
        return value


def load_script(path: Path) -> tuple[Script, bytes]:
    """Read and validate a script; returns it with its raw bytes (for state keying)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScriptError(f"cannot be read: {exc.strerror}", path=path) from None
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ScriptError(f"not valid JSON: {exc}", path=path) from None
    return parse_script(obj, path), raw


def forget_positions(state_dir: Path) -> int:
    """Start every script whose position is kept in ``state_dir`` over from its first
    response; returns how many positions were forgotten. Each file is removed under its own
    lock, so a run advancing it at the same moment never sees half a file."""
    forgotten = 0
    try:
        names = sorted(p.name for p in state_dir.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return 0
    except OSError as exc:
        raise ProviderError(f"cannot list scripted provider state {state_dir}: "
                            f"{exc.strerror}") from None
    for name in names:
        if not (name.startswith(_STATE_PREFIX) and name.endswith(".json")):
            continue
        path = state_dir / name
        lock_path = path.with_name(name + ".lock")
        try:
            with FileLock(lock_path, timeout=LOCK_TIMEOUT_SECONDS):
                path.unlink(missing_ok=True)
        except FileLockTimeout:
            raise LockTimeout(lock_path, LOCK_TIMEOUT_SECONDS) from None
        except OSError as exc:
            raise ProviderError(f"cannot remove scripted provider state {path}: "
                                f"{exc.strerror}") from None
        forgotten += 1
    return forgotten


def state_file(state_dir: Path, script_path: Path, raw: bytes) -> Path:
    """Where the position of this script (this path, this content) is kept."""
    key = hashlib.sha256(
        str(script_path.resolve()).encode("utf-8", "surrogatepass") + b"\0"
        + hashlib.sha256(raw).digest()
    ).hexdigest()[:32]
    return state_dir / f"{_STATE_PREFIX}{key}.json"


class ScriptedProvider:
    def __init__(
        self,
        script: Script,
        *,
        counter: RequestCounter | None = None,
        position: ScriptPosition | None = None,
        model: str | None = None,
    ) -> None:
        self.script = script
        self._counter = counter if counter is not None else tokens_counter(script.encoding)
        self._position: ScriptPosition = position if position is not None else MemoryPosition()
        self._model = model if model is not None else f"scripted:{script.path}"

    @classmethod
    def from_file(
        cls,
        path: Path,
        *,
        counter: RequestCounter | None = None,
        state_dir: Path | None = None,
        model: str | None = None,
    ) -> ScriptedProvider:
        """Load ``path``; with ``state_dir`` the position persists across processes."""
        script, raw = load_script(path)
        position: ScriptPosition = (
            FilePosition(state_file(state_dir, path, raw), script=path.resolve())
            if state_dir is not None else MemoryPosition()
        )
        return cls(script, counter=counter, position=position, model=model)

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return self.script.context_window

    @property
    def encoding(self) -> str:
        return self.script.encoding

    def step(self, request: ProviderRequest, *, on_event: EventSink | None = None) -> StepResult:
        if self.script.request_log is not None:
            self._log(request)
        index = self._position.take()
        entries = self.script.entries
        if index >= len(entries):
            kept = (
                " (its position is kept across runs in this workspace; `segue clear --yes`, "
                "another workspace or an edit of the script starts it over)"
                if isinstance(self._position, FilePosition) and index > 0 else ""
            )
            raise ScriptExhausted(
                f"scripted provider {self.script.path} has no response for step {index + 1}: "
                f"the script has {len(entries)} response(s){kept}",
                path=self.script.path,
                steps=len(entries),
            )
        entry = entries[index]
        if isinstance(entry, ScriptedError):
            if entry.kind == "context_overflow":
                raise ContextOverflowError(entry.message)
            raise ProviderError(entry.message)
        calls = tuple(
            ToolCall(call.id or f"call_{index + 1}_{n + 1}", call.name, dict(call.input))
            for n, call in enumerate(entry.tool_calls)
        )
        usage = self._usage(entry, index, request, calls)
        if on_event is not None:
            for start in range(0, len(entry.text), DELTA_CHARS):
                on_event(TextDelta(entry.text[start : start + DELTA_CHARS]))
            for call in calls:
                on_event(ToolCallEvent(call))
        return StepResult(entry.text, calls, usage)

    def _usage(
        self,
        entry: ScriptedResponse,
        index: int,
        request: ProviderRequest,
        calls: tuple[ToolCall, ...],
    ) -> Usage:
        input_tokens, output_tokens = entry.input_tokens, entry.output_tokens
        if input_tokens is None or output_tokens is None:
            if input_tokens is None:
                input_tokens = self._counter(request)
            if output_tokens is None:
                output_tokens = self._counter(_reply_request(entry.text, calls))
        return Usage(input_tokens, output_tokens)

    def _log(self, request: ProviderRequest) -> None:
        path = self.script.request_log
        assert path is not None  # checked by the caller
        line = encode_obj(request_to_obj(request)) + b"\n"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                # One write on O_APPEND: a line is never interleaved with another process's.
                # A short write to a regular file means the disk is full; say so.
                written = os.write(fd, line)
                if written != len(line):
                    raise ProviderError(f"short write to requestLog {path}")
            finally:
                os.close(fd)
        except OSError as exc:
            raise ProviderError(f"cannot append to requestLog {path}: {exc.strerror}") from None


def tokens_counter(encoding: str) -> RequestCounter:
    """Counts a request exactly as the engine's preflight does (R17: the real encoding)."""

    def count(request: ProviderRequest) -> int:
        return count_request(
            request.system, request.rows, request.tools, None, encoding=encoding
        ).tokens

    return count


def _reply_request(text: str, calls: tuple[ToolCall, ...]) -> ProviderRequest:
    """The step's own reply as a one-row request, so output is counted like input."""
    parts = ([text_part(text)] if text else []) + [
        Part(type="dynamic-tool", toolCallId=c.id, toolName=c.name, input=dict(c.input),
             state="input-available")
        for c in calls
    ]
    return ProviderRequest("", (make_row("assistant", id="scripted-reply", parts=parts),), ())
