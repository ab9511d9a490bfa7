"""Tool calls and results as a person reads them, for the line chat, ``run`` and the TUI. Pure.

A call is one line: ``$ the command`` for ``bash``, the path for a file tool, compact JSON
otherwise. A result is a short status line and, for a command, an excerpt of its output as
text (not the escaped JSON the model receives): the first lines, and how many more there are.
An interrupted command says "interrupted"; a declined call says it was not run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: How many lines of a command's output are shown under its result.
EXCERPT_LINES = 6
EXCERPT_CHARS = 160


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compact(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(text.split())


def call_text(name: str, args: Any, limit: int = 100) -> str:
    if isinstance(args, Mapping):
        if name == "bash" and isinstance(args.get("command"), str):
            return _cut(f"bash $ {' '.join(args['command'].split())}", limit + 8)
        if name.startswith("file_") and isinstance(args.get("path"), str):
            return _cut(f"{name} {args['path']}", limit + 8)
    return f"{name} {_cut(_compact(args), limit)}"


def result_lines(output: Any) -> list[str]:
    """The status line, then any excerpt lines (without indentation)."""
    if not isinstance(output, Mapping):
        return [_cut(_compact(output), EXCERPT_CHARS)]
    error = output.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    if code == "interrupted":
        head = "interrupted: the command and its child processes were killed"
    elif code == "approval_denied":
        head = f"not run: {message}" if isinstance(message, str) else "not run"
    elif code is not None:
        head = f"error {code}: {message}"
    elif "exitCode" in output:
        head = f"exit {output['exitCode']}"
        if "signal" in output:
            head += f" ({output['signal']})"
        if isinstance(output.get("durationMs"), int):
            head += f" · {output['durationMs'] / 1000:.1f}s"
    elif output.get("ok") is True and (found := _success(output)) is not None:
        head, listed = found
        return [_cut(head, EXCERPT_CHARS), *_excerpt(listed)]
    elif output.get("ok") is True and isinstance(output.get("path"), str):
        head = f"ok · {output['path']}"
        if isinstance(output.get("bytes"), int):
            head += f" ({output['bytes']} bytes)"
    else:
        return [_cut(_compact(output), EXCERPT_CHARS)]
    lines = [_cut(head, EXCERPT_CHARS)]
    text = output.get("output")
    if isinstance(text, str) and text.strip():
        body = text.rstrip("\n").split("\n")
        lines += [_cut(line, EXCERPT_CHARS) for line in body[:EXCERPT_LINES]]
        if len(body) > EXCERPT_LINES:
            lines.append(f"… {len(body) - EXCERPT_LINES} more lines")
    return lines


def _excerpt(listed: list[str]) -> list[str]:
    lines = [_cut(line, EXCERPT_CHARS) for line in listed[:EXCERPT_LINES]]
    if len(listed) > EXCERPT_LINES:
        lines.append(f"… {len(listed) - EXCERPT_LINES} more")
    return lines


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} " + (word if count == 1 else many or word + "s")


def _success(out: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """The status line and the listed lines of a built-in tool's success, by its shape;
    None for a shape not known here (shown as compact JSON)."""
    more = " · more on the next page" if out.get("nextCursor") else ""
    windows, items = out.get("windows"), out.get("items")
    if "action" in out and isinstance(windows, list):  # session_history list_windows
        return _plural(len(windows), "window") + more, [
            f"{w.get('windowId')} {w.get('kind')}: {_plural(int(w.get('items') or 0), 'item')}"
            f" #{w.get('firstItemId')} … #{w.get('lastItemId')}"
            for w in windows if isinstance(w, Mapping)]
    if "action" in out and isinstance(items, list):  # session_history: items, hits, a page
        if out.get("action") == "read_item" and len(items) == 1 and isinstance(items[0], Mapping):
            item = items[0]
            page = str(item.get("text") or "").rstrip("\n").split("\n")
            return (f"#{item.get('itemId')} ({item.get('windowId')}, {item.get('role')})"
                    + (" · continues" if item.get("nextCharOffset") is not None else ""), page)
        noun = "hit" if out.get("action") == "search" else "item"
        return _plural(len(items), noun) + more, [
            f"#{i.get('itemId')} ({i.get('windowId')}, {i.get('role')}): "
            + " ".join(str(i.get("text") or "").split())
            for i in items if isinstance(i, Mapping)]
    if isinstance(out.get("taskId"), str) and isinstance(out.get("report"), str):  # task
        report = out["report"].rstrip("\n")
        return (f"task {out['taskId']} ({out.get('agent')}) done · "
                f"{_plural(int(out.get('rollovers') or 0), 'rollover')}"), report.split("\n")
    if set(out) == {"ok", "windowId"}:  # new_context
        return f"ok · the conversation continues in {out['windowId']}", []
    matches, files = out.get("matches"), out.get("files")
    if isinstance(matches, list):  # file_search with a query
        return _plural(len(matches), "match", "matches") + _scan(out), [
            f"{m.get('path')}:{m.get('line')}: {m.get('text')}"
            for m in matches if isinstance(m, Mapping)]
    if isinstance(files, list):  # file_search by name, memory list
        return _plural(len(files), "file") + _scan(out), [
            str(f.get("path") if isinstance(f, Mapping) else f) for f in files]
    if isinstance(out.get("content"), str):
        text = out["content"].rstrip("\n")
        if isinstance(out.get("path"), str) and "startLine" in out:  # file_read: not echoed
            head = f"ok · {out['path']} lines {out.get('startLine')}–{out.get('endLine')}"
            return head + (" (more follows)" if out.get("truncated") else ""), []
        return f"ok · {_plural(len(text.splitlines()), 'line')}", text.split("\n")  # memory
    if isinstance(out.get("replacements"), int) and isinstance(out.get("path"), str):
        return (f"ok · {out['path']}: {_plural(out['replacements'], 'replacement')} at line "
                f"{out.get('line')}"), []
    tools = out.get("tools")
    if isinstance(tools, list):  # tool_search
        names = [str(t.get("name")) for t in tools if isinstance(t, Mapping)]
        return (f"{_plural(len(names), 'tool')} activated" + (f": {', '.join(names)}"
                                                              if names else "")), []
    return None


def _scan(out: Mapping[str, Any]) -> str:
    scanned = out.get("scanned")
    files = scanned.get("files") if isinstance(scanned, Mapping) else None
    tail = f" ({_plural(files, 'file')} scanned)" if isinstance(files, int) else ""
    return tail + (" · stopped early" if out.get("truncated") else "")


def result_text(output: Any, indent: str = "    ") -> str:
    """The result as printed: ``→`` before the status line, the excerpt indented below."""
    head, *rest = result_lines(output)
    return "\n".join([f"{indent}→ {head}", *(f"{indent}  {line}" for line in rest)])


def task_started_text(task_id: str, agent: str, prompt: str) -> str:
    """The line a sub-agent's task starts with (R41)."""
    return f"task {task_id} ({agent}) started: {_cut(_compact(prompt), 100)}"


def task_finished_text(
    task_id: str, agent: str, status: str, reason: str | None, rollovers: int
) -> str:
    """The line a sub-agent's task ends with: how, and where its history is."""
    why = f": {_cut(reason, 100)}" if reason and status != "completed" else ""
    return (f"task {task_id} ({agent}) {status}{why} · {_plural(rollovers, 'rollover')} · "
            f"its history: segue -w {task_id} history windows")
