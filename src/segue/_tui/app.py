"""The full-screen chat: :class:`segue._chat.ChatLoop` with a Textual view in front of it.

The app is only a view. Everything a chat does — parsing slash commands, running turns with a
:class:`~segue._session.admission.Cancellation`, /clear's confirmation, rebuilding the Session on
/agent and /settings set, the meter — is the line chat's own code, run unchanged in one worker
thread. The view gives that loop its three edges:

* ``read_line``: lines typed into the input, through a queue. The loop's prompt carries the
  meter, which goes to the status line; any other prompt is a question (/clear's "Destroy it?")
  asked with a dialog. The end of input (Ctrl-D, quitting) is an EOFError, Ctrl-C at the prompt
  a KeyboardInterrupt, exactly as the terminal gives them.
* ``write``: the loop's own ``[segue]`` messages and dividers, shown as machine entries (R9).
* the engine's events, taken at the Session's sink instead of the loop's text renderer, so the
  transcript shows structured entries: streamed text, tool lines, the "Context window rollover"
  divider, notices.

Invariants: the UI thread never waits for the engine (turns, commands and store reads all run
in the worker); the worker reaches the UI only through ``call_from_thread``; Escape or Ctrl-C
during a turn only sets the turn's Cancellation: a streaming reply stops at once (its text kept,
R40), otherwise the engine stops at its next safe point, and every settled step stays on disk.
While a task runs (R41) the status line names it, and the first Escape or Ctrl-C stops the
task alone (the turn reads its result and goes on), the next one the turn. Quitting ends the
loop through end of input, so a running turn (and its task) is cancelled and stops cleanly
before the app is gone.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from enum import Enum
from typing import Any, ClassVar, TypeVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from segue._chat import ChatLoop
from segue._chat.approval import remembered
from segue._chat.interrupt import OnInterrupt
from segue._chat.loop import SessionSource
from segue._events import (
    AssistantText,
    Event,
    EventSink,
    StepUsage,
    TaskFinished,
    TaskStarted,
    ToolFinished,
    ToolStarted,
)
from segue._render.lines import Line, event_lines, machine
from segue._session import Session
from segue._tools.gate import Answer, ApprovalRequest
from segue._tui.lines import history_lines, output_line, prompt_meter, usage_meter
from segue._tui.widgets import ApprovalDialog, PromptArea, Question, Transcript

T = TypeVar("T")

#: How often streamed text is drawn, in seconds.
STREAM_INTERVAL = 1 / 30
#: How often the working indicator's elapsed time is redrawn, in seconds.
WORKING_INTERVAL = 0.5
INTERRUPTING = "interrupting: stopping the turn"
#: The working indicator while the model's reply streams.
WRITING = "replying"


class _Key(Enum):
    """What the input queue carries besides typed lines."""

    END_OF_INPUT = "end of input"
    CTRL_C = "ctrl-c"


Typed = str | _Key


class _ViewSessions:
    """The loop's session source, with the view as every Session's event sink.

    The loop hands ``open`` its text renderer; the view renders events itself, so that sink
    is deliberately not used."""

    def __init__(
        self, inner: SessionSource, sink: EventSink, opened: Callable[[Session, bool], None]
    ) -> None:
        self._inner = inner
        self._sink = sink
        self._opened = opened

    def open(
        self, agent_name: str | None, on_event: EventSink, keep: Session | None = None
    ) -> Session:
        session = self._inner.open(agent_name, self._sink, keep=keep)
        self._opened(session, keep is None)
        return session

    def agents(self) -> list[str]:
        return self._inner.agents()


class ChatApp(App[int]):
    """``segue chat --tui``. The return value of :meth:`run` is the chat's exit status."""

    TITLE = "segue chat"
    # The status line and the input share one bottom-docked container, the status above the
    # input: two widgets docked bottom separately overlap, and the input hid the status.
    CSS = """
    #bottom { dock: bottom; height: auto; }
    #status {
        height: 1; padding: 0 1; background: $primary-background; color: $text;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Stop the turn", priority=True),
        Binding("escape", "stop_turn", "Stop the turn", show=False),
        Binding("ctrl+d", "leave", "Leave", priority=True),
        Binding("ctrl+q", "leave", "Leave", priority=True, show=False),
    ]

    def __init__(
        self,
        sessions: SessionSource,
        *,
        agent_name: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock`` (seconds, monotonic) times the working indicator."""
        super().__init__()
        self._clock = clock
        self._typed: queue.SimpleQueue[Typed] = queue.SimpleQueue()
        self._answers: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._lock = threading.Lock()
        #: While a turn runs: how to stop it and how to say so (from the loop's guard).
        self._interrupt: tuple[OnInterrupt, Callable[[str], None]] | None = None
        #: The task the turn is running (its id and agent), and whether it is stopping.
        self._running_task: tuple[str, str] | None = None
        self._task_stopping = False
        self._streamed: list[str] = []  # streamed text not drawn yet (under _lock)
        self._pending = ""  # the loop's output up to its next newline
        self._last_said = ""
        self._closing = False
        self._ui_thread = threading.get_ident()
        self._meter = "…"
        self._who = ""
        #: How many lines the loop has asked for: each one means the previous line is done.
        self.prompts = 0
        self._waiting = False  # the loop is waiting for a line and none has been typed
        self.loop = ChatLoop(
            _ViewSessions(sessions, self._on_event, self._on_open),
            read_line=self._read_line,
            write=self._write,
            interactive=True,
            color=False,
            agent_name=agent_name,
            guard=self._guard,
            approver=self._approve,
        )
        self._approvals: queue.SimpleQueue[Answer] = queue.SimpleQueue()
        #: While a turn runs: when it started (monotonic) and what it is doing now.
        self._busy_since: float | None = None
        self._activity = "thinking"

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Transcript()
        with Vertical(id="bottom"):
            yield Static("starting…", id="status", markup=False)
            yield PromptArea(id="prompt")

    def on_mount(self) -> None:
        self._ui_thread = threading.get_ident()
        prompt = self.query_one("#prompt", PromptArea)
        prompt.border_subtitle = "Enter sends · Ctrl+J new line · /help"
        prompt.focus()
        self.set_interval(STREAM_INTERVAL, self._draw_streamed)
        self.set_interval(WORKING_INTERVAL, self._tick)
        self.run_worker(self._run_loop, name="chat", thread=True, exit_on_error=True)

    def on_unmount(self) -> None:
        # However the app ends, the loop must too, or its thread would outlive the view.
        self._closing = True
        self._cancel_turn(whole=True)
        self._typed.put(_Key.END_OF_INPUT)
        self._answers.put(False)
        self._approvals.put(Answer.NO)

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def status_text(self) -> str:
        return str(self.query_one("#status", Static).content)

    # -- the worker ----------------------------------------------------------------------------

    def _run_loop(self) -> None:
        status = self.loop.run()
        self._to_app(self.exit, status)

    def _to_app(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn`` on the UI thread (the loop calls from its worker; Ctrl-C's notice
        comes from the UI thread itself)."""
        if self._closing:
            return  # the view is going away: there is nowhere to show anything
        if threading.get_ident() == self._ui_thread:
            fn(*args)
        else:
            self.call_from_thread(fn, *args)

    def _read_line(self, prompt: str) -> str:
        meter = prompt_meter(prompt)
        if meter is None:
            self._to_app(self._ask, prompt)
            return "y" if self._answers.get() else "n"
        self._to_app(self._at_prompt, meter)
        typed = self._typed.get()
        if typed is _Key.END_OF_INPUT:
            raise EOFError
        if typed is _Key.CTRL_C:
            raise KeyboardInterrupt
        self._to_app(self._echo, typed)
        return typed

    def _write(self, text: str) -> None:
        self._to_app(self._take_output, text)

    def _guard(
        self, work: Callable[[], T], on_interrupt: OnInterrupt, notify: Callable[[str], None]
    ) -> T:
        with self._lock:
            self._interrupt = (on_interrupt, notify)
        self._to_app(self._set_busy, True)
        try:
            return work()
        finally:
            with self._lock:
                self._interrupt = None
            self._to_app(self._set_busy, False)

    def _approve(self, request: ApprovalRequest) -> Answer:
        """R38 from the worker: the dialog on the UI thread, the answer through a queue."""
        self._to_app(self._ask_approval, request)
        answer = self._approvals.get()
        if answer is Answer.ALWAYS:
            self._write(f"[segue] {remembered(request)}\n")
        elif answer is Answer.NO:
            self._write("[segue] not run; the model is told it was declined\n")
        return answer

    def _on_event(self, event: Event) -> None:
        if isinstance(event, AssistantText):
            # Streamed text is gathered here and drawn at the view's pace: a reply arrives
            # in thousands of small pieces, and redrawing a long entry for each one would
            # make the view, and the turn waiting on it, slow.
            with self._lock:
                self._streamed.append(event.text)
            return
        self._to_app(self._show_event, event)

    def _on_open(self, session: Session, first: bool) -> None:
        if first:
            # The workspace's history so far, read here in the worker (it may be long).
            self._to_app(self.transcript.add, history_lines(session.store.rows()))
        self._to_app(self._set_who, session.agent.name, session.provider.model)

    # -- on the UI thread ----------------------------------------------------------------------

    def _draw_streamed(self) -> None:
        """Show the text streamed so far. Everything else the worker shows calls this first,
        so streamed text is never drawn after what followed it."""
        with self._lock:
            text = "".join(self._streamed)
            self._streamed.clear()
        if text:
            self.transcript.stream(text)
            if self._busy_since is not None and self._activity != WRITING:
                self._activity = WRITING  # the model is replying, no longer only thinking
                self._show_status()

    def _show_event(self, event: Event) -> None:
        self._draw_streamed()
        if isinstance(event, TaskStarted | TaskFinished):
            started = isinstance(event, TaskStarted)
            self._running_task = (event.task_id, event.agent) if started else None
            self._task_stopping = False
            self._show_status()
        if isinstance(event, ToolStarted | ToolFinished):
            self._activity = f"running {event.name}" if isinstance(event, ToolStarted) else (
                "thinking")
            self._show_status()
        if isinstance(event, StepUsage):
            self._activity = "thinking"  # the step is over; the next one has not replied yet
            self._set_meter(usage_meter(event))
        else:
            self.transcript.add(event_lines(event))

    def _take_output(self, text: str) -> None:
        self._draw_streamed()
        *complete, self._pending = (self._pending + text).split("\n")
        lines = [line for raw in complete if (line := output_line(raw)) is not None]
        if lines:
            self._last_said = lines[-1].text
        self.transcript.add(lines)

    def _echo(self, typed: str) -> None:
        self.transcript.add([Line("user", typed)])

    def _ask(self, prompt: str) -> None:
        self._draw_streamed()
        self.push_screen(Question(prompt, self._last_said), self._answer)

    def _answer(self, yes: bool | None) -> None:
        self._answers.put(bool(yes))

    def _ask_approval(self, request: ApprovalRequest) -> None:
        self._draw_streamed()
        # The tool has not started: the turn is waiting for the person, and says so.
        running, self._activity = self._activity, "waiting for your answer"
        self._show_status()

        def approved(answer: Answer | None) -> None:
            self._activity = running
            self._show_status()
            self._approvals.put(answer if answer is not None else Answer.NO)

        self.push_screen(ApprovalDialog(request), approved)

    def _set_busy(self, busy: bool) -> None:
        self._busy_since = self._clock() if busy else None
        self._running_task = None
        self._activity = "thinking"
        self._show_status()

    def _tick(self) -> None:
        if self._busy_since is not None:
            self._show_status()

    def _at_prompt(self, meter: str) -> None:
        self._draw_streamed()
        self.transcript.end_reply()
        self._waiting = True
        self.prompts += 1
        self._set_meter(meter)

    def _set_meter(self, meter: str) -> None:
        self._meter = meter
        self._show_status()

    def _set_who(self, agent: str, model: str) -> None:
        self._who = f"agent {agent} · model {model}"
        self._show_status()

    def _show_status(self) -> None:
        # One line, cut at its end when the terminal is narrow: what is happening comes
        # first, so a long model name can never hide the working indicator or the meter.
        text = f"{self._meter} · {self._who}"
        if self._busy_since is not None:
            elapsed = int(self._clock() - self._busy_since)
            if self._running_task is not None:
                task_id, agent = self._running_task
                doing, keys = (("stopping", "Ctrl-C again stops the turn") if self._task_stopping
                               else ("running", "Ctrl-C stops the task"))
                text = f"● task {task_id} ({agent}) {doing} {elapsed}s · {keys} · {text}"
            else:
                text = f"● {self._activity} {elapsed}s (Esc stops) · {text}"
        self.query_one("#status", Static).update(text)

    def on_prompt_area_submitted(self, event: PromptArea.Submitted) -> None:
        if not event.value.strip():
            return
        if not self._waiting:
            # Typed ahead, as in a terminal: kept, and run when the loop next asks for one.
            self.transcript.aside(machine("queued: runs when the current one is done"))
        self._waiting = False
        self._typed.put(event.value)
        event.area.clear()

    def _cancel_turn(self, *, whole: bool = False) -> bool:
        """Stop the running task, or the turn when none runs (``whole``: the turn, and so
        its task, at once). False when no turn runs."""
        with self._lock:
            running = self._interrupt
        if running is None:
            return False
        interrupt, _notify = running
        said = interrupt()
        while whole and said is not None:
            said = interrupt()  # the task is stopping; this one stops the turn
        if self._closing:
            return True  # the view is going away: nowhere to say so
        if said is not None:
            self._task_stopping = True
            self._show_status()
        # As an aside: a note must not cut the reply being streamed into two entries.
        self._draw_streamed()
        self.transcript.aside(machine(INTERRUPTING if said is None else said))
        return True

    def action_stop_turn(self) -> None:
        self._cancel_turn()

    def action_interrupt(self) -> None:
        # At the prompt, Ctrl-C means what it means in the line chat (twice leaves).
        if not self._cancel_turn():
            self._typed.put(_Key.CTRL_C)

    def action_leave(self) -> None:
        self._cancel_turn(whole=True)
        self._typed.put(_Key.END_OF_INPUT)
