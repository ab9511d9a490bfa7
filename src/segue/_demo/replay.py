"""Tools that replay a recorded run's observations instead of running anything.

The demo never executes a recorded command: each call is answered with the output the
recorded run got, prefixed with :data:`REPLAY_LABEL` so the model, the transcript and anyone
reading it can tell a replay from a real result.

A :class:`Tape` holds the recorded calls in order and is strict, like the scripted provider:
a call that is not the next recorded one (another tool, other input) is answered with a
``replay_mismatch`` error and remembered, and :meth:`Tape.check_finished` raises when calls
were left unplayed or mismatched. One tape is shared by one :class:`ReplayTool` per recorded
tool name, so the calls keep their recorded names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from segue._demo.plan import RecordedCall
from segue._errors import DemoFailed
from segue._tools.base import tool_error

REPLAY_LABEL = "[replayed from the recorded run; nothing was executed]"


class Tape:
    def __init__(self, calls: Sequence[RecordedCall], *, source: str) -> None:
        self.calls = tuple(calls)
        self.source = source
        self.position = 0
        self.mismatches: list[str] = []

    def play(self, name: str, args: Mapping[str, Any]) -> Any:
        if self.position >= len(self.calls):
            self.mismatches.append(f"unexpected extra call to {name}")
            return tool_error("replay_mismatch", "the recorded run made no further calls")
        expected = self.calls[self.position]
        if expected.name != name or dict(expected.input) != dict(args):
            self.mismatches.append(
                f"call {self.position + 1}: expected {expected.name} {dict(expected.input)!r}, "
                f"got {name} {dict(args)!r}"
            )
            return tool_error(
                "replay_mismatch",
                f"the recorded run's next call was {expected.name}, with other input",
            )
        self.position += 1
        return f"{REPLAY_LABEL}\n{expected.output}"

    def check_finished(self) -> None:
        """Raise DemoFailed unless every recorded call was played, in order."""
        if self.mismatches:
            raise DemoFailed(f"the replay of {self.source} went off script: {self.mismatches[0]}")
        if self.position != len(self.calls):
            raise DemoFailed(
                f"the replay of {self.source} stopped after {self.position} of "
                f"{len(self.calls)} recorded calls"
            )


class ReplayTool:
    """One recorded tool name, answered from the shared tape."""

    def __init__(self, name: str, tape: Tape) -> None:
        self._name = name
        self._tape = tape

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return (
            f"Replays the recorded output of the {self._name!r} tool from the recorded run "
            f"{self._tape.source}; nothing is executed."
        )

    @property
    def schema(self) -> Mapping[str, Any]:
        # The recorded run's own schema is not in the trajectory; any object is accepted and
        # the tape checks it against the recorded input.
        return {"type": "object", "additionalProperties": True}

    def run(self, args: Mapping[str, Any]) -> Any:
        return self._tape.play(self._name, args)


def replay_tools(tape: Tape) -> list[ReplayTool]:
    """One tool per distinct recorded name, in order of first use."""
    names: Iterable[str] = dict.fromkeys(call.name for call in tape.calls)
    return [ReplayTool(name, tape) for name in names]
