"""The widgets of the full-screen chat: the transcript, its entries, and the question dialog.

Widgets only show what they are given; nothing here touches a session or the store.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from segue.cli.render import divider
from segue.tui.lines import Line


class Entry(Static):
    """One transcript entry. ``line`` is what it shows, as plain text (markup is off: the
    transcript holds the user's and the model's words, which must never be interpreted)."""

    def __init__(self, line: Line) -> None:
        super().__init__(_shown(line), markup=False, classes=line.kind)
        self.line = line

    def append(self, text: str) -> None:
        self.line = Line(self.line.kind, self.line.text + text)
        self.update(_shown(self.line))


def _shown(line: Line) -> str:
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
    Entry.user { color: $text; text-style: bold; }
    Entry.assistant { color: $text; }
    Entry.segue { color: $warning; text-style: italic; }
    Entry.tool { color: $text-muted; margin: 0; }
    Entry.divider { color: $accent; text-style: bold; text-align: center; }
    """

    def __init__(self) -> None:
        super().__init__(id="transcript")
        self._streaming: Entry | None = None

    def add(self, lines: list[Line]) -> None:
        if not lines:
            return
        self._streaming = None
        self.mount_all([Entry(line) for line in lines])
        self.scroll_end(animate=False)

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
        width: 64; height: auto; border: thick $error; background: $surface; padding: 1 2;
    }
    Question Horizontal { height: auto; margin-top: 1; }
    Question Button { margin-right: 2; }
    """
    BINDINGS = [  # noqa: RUF012 (Textual's declared class attribute)
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, prompt: str, context: str) -> None:
        super().__init__()
        self.prompt = prompt
        self.context = context

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.context, markup=False)
            yield Label(self.prompt.strip(), markup=False)
            with Horizontal():
                yield Button("No", id="no", variant="primary")
                yield Button("Yes", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
