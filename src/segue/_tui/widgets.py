"""The widgets of the full-screen chat: the transcript, its entries, the message input, the
question dialog and the approval dialog.

Widgets only show what they are given; nothing here touches a session or the store.
"""

from __future__ import annotations

from typing import ClassVar

from rich.markdown import Markdown
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, TextArea

from segue._chat.approval import choices, headline, preview_lines
from segue._render.lines import Line
from segue._render.terminal import divider
from segue._tools.gate import Answer, ApprovalRequest


class Entry(Static):
    """One transcript entry. ``line`` is what it shows. Textual markup is off (the transcript
    holds the user's and the model's words, which must never be interpreted as styling); the
    model's replies are rendered as Markdown (code blocks, lists, emphasis), everything else
    as plain text."""

    def __init__(self, line: Line) -> None:
        super().__init__(_shown(line), markup=False, classes=line.kind)
        self.line = line

    def append(self, text: str) -> None:
        self.line = Line(self.line.kind, self.line.text + text)
        self.update(_shown(self.line))


def _shown(line: Line) -> str | Markdown:
    if line.kind == "assistant":
        # Markdown's own renderer, which shows a link's text and never runs anything.
        return Markdown(line.text, code_theme="monokai", hyperlinks=False)
    return _plain(line)


def _plain(line: Line) -> str:
    if line.kind == "divider":
        return divider(line.text)
    if line.kind == "user":
        return f"› {line.text}"
    return line.text


class Transcript(VerticalScroll):
    """The conversation, oldest first; streamed assistant text grows the newest entry."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; }
    Entry { margin: 0 0 1 0; }
    Entry.user {
        color: $text; text-style: bold; background: $boost; border-left: thick $accent;
        padding: 0 1; margin: 1 0;
    }
    Entry.assistant { color: $text; margin: 1 0; }
    Entry.segue { color: $warning; text-style: italic; }
    Entry.tool { color: $text-muted; margin: 0; }
    Entry.divider { color: $accent; text-style: bold; text-align: center; }
    """

    def __init__(self) -> None:
        super().__init__(id="transcript")
        self._streaming: Entry | None = None
        #: notes held until the streaming entry ends (:meth:`aside`)
        self._asides: list[Line] = []

    def add(self, lines: list[Line]) -> None:
        if not lines and not self._asides:
            return
        self._streaming = None
        self.mount_all([Entry(line) for line in [*self._asides, *lines]])
        self._asides.clear()
        self.scroll_end(animate=False)

    def aside(self, line: Line) -> None:
        """A note that must not cut a streaming reply in two (a message typed ahead, "Esc
        pressed"): shown after the reply's entry ends, at once when none is streaming."""
        if self._streaming is None:
            self.add([line])
        else:
            self._asides.append(line)

    def end_reply(self) -> None:
        """The reply being streamed is over: show the notes held for its end."""
        if self._asides:
            self.add([])

    def stream(self, text: str) -> None:
        """Streamed assistant text: a new entry, or more of the one being streamed."""
        if self._streaming is None:
            self._streaming = Entry(Line("assistant", text))
            self.mount(self._streaming)
        else:
            self._streaming.append(text)
        self.scroll_end(animate=False)

    def lines(self) -> list[Line]:
        return [entry.line for entry in self.query(Entry)]


class Question(ModalScreen[bool]):
    """A yes/no question from the chat loop (such as /clear's confirmation); No is the
    default, as ``[y/N]`` says."""

    DEFAULT_CSS = """
    Question { align: center middle; }
    Question > Vertical {
        width: 80%; max-width: 100; height: auto; border: thick $error; background: $surface;
        padding: 1 2;
    }
    Question Label { width: 100%; }
    Question #question { margin-top: 1; text-style: bold; }
    Question Horizontal { height: auto; margin-top: 1; }
    Question Button { margin-right: 2; }
    """
    BINDINGS = [  # noqa: RUF012 (Textual's declared class attribute)
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, prompt: str, context: str) -> None:
        """``context`` is what the loop said last (the warning the question is about); in the
        dialog it needs no ``[segue]`` prefix: the whole dialog is segue's."""
        super().__init__()
        self.prompt = prompt
        self.context = context.removeprefix("[segue] ")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.context, markup=False)
            yield Label(self.prompt.strip(), markup=False, id="question")
            with Horizontal():
                yield Button("No", id="no", variant="primary")
                yield Button("Yes", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class PromptArea(TextArea):
    """The message input, several lines high when it needs to be: Enter sends the whole text,
    Ctrl+J (or Shift+Enter, where the terminal reports it) inserts a newline, and a paste is
    inserted whole, newlines included, to be sent with Enter like anything typed."""

    DEFAULT_CSS = """
    PromptArea { height: auto; min-height: 3; max-height: 10; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+j,shift+enter", "newline", "New line", show=False),
    ]

    class Submitted(Message):
        def __init__(self, area: PromptArea, value: str) -> None:
            super().__init__()
            self.area = area
            self.value = value

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def clear(self) -> None:  # type: ignore[override]
        self.load_text("")

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        await super()._on_key(event)

    def action_newline(self) -> None:
        self.insert("\n")


class ApprovalDialog(ModalScreen[Answer]):
    """R38 in the full-screen chat: the exact command or diff, and y / n / a. No is the
    default (Escape, Enter on the focused No button); the choice a keeps is shown."""

    DEFAULT_CSS = """
    ApprovalDialog { align: center middle; }
    ApprovalDialog > Vertical {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    ApprovalDialog VerticalScroll { height: auto; max-height: 16; margin: 1 0; }
    ApprovalDialog .added { color: $success; }
    ApprovalDialog .removed { color: $error; }
    ApprovalDialog .hunk { color: $accent; }
    ApprovalDialog .note { color: $text-muted; }
    ApprovalDialog .plain { text-style: bold; }
    ApprovalDialog Horizontal { height: auto; margin-top: 1; }
    ApprovalDialog Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('yes')", "Yes"),
        Binding("a", "answer('always')", "Always"),
        Binding("n,escape", "answer('no')", "No"),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(headline(self.request), markup=False)
            with VerticalScroll():
                for line in preview_lines(self.request):
                    yield Static(line.text or " ", markup=False, classes=line.tone)
            yield Label(choices(self.request), markup=False)
            with Horizontal():
                yield Button("No (n)", id="no", variant="primary")
                yield Button("Yes (y)", id="yes", variant="warning")
                yield Button("Always (a)", id="always", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(Answer(event.button.id or "no"))

    def action_answer(self, answer: str) -> None:
        self.dismiss(Answer(answer))
