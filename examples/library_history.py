"""Reading a transcript from Python, with and without the model's bounds, offline.

A session talks, the user clears the context with /clear --soft (the privacy floor), and
talks on. Then the same workspace is read three ways:

* ``segue.open_history(ws)`` — the owner's view: complete and unbounded, but from the
  privacy floor on by default, as the model sees it;
* ``segue.open_history(ws, include_cleared=True)`` — everything, also what was cleared
  (what ``segue history`` shows);
* ``.as_model()`` — exactly what the model's ``session_history`` tool answers: bounded
  pages, cursors, the tool's own JSON.

    SEGUE_HOME=/tmp/segue-lib python examples/library_history.py
    segue --home /tmp/segue-lib -w library-history history search deploy

Exits 0 when the three views answered as shown, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import segue

WORKSPACE = "library-history"
RESPONSES = [
    {"text": "Noted: the deploy key is in the vault, row 7."},
    {"text": "Fresh start. Noted: deploy on Fridays is off."},
    {"text": "Noted: the deploy checklist has five steps."},
]


def main(home: Path, scratch: Path) -> int:
    script = scratch / "script.json"
    script.write_text(json.dumps(
        {"contextWindow": 16000, "encoding": "o200k_base", "responses": RESPONSES}))
    with segue.open_session(WORKSPACE, home=home, workdir=scratch,
                            model=f"scripted:{script}", experiment=True) as session:
        session.clear_hard()
        session.send("the deploy key is in the vault, row 7")
        session.clear_soft()               # /clear --soft: the model may not look back past it
        session.send("no deploys on Fridays")
        session.send("the deploy checklist has five steps")

    mine = segue.open_history(WORKSPACE, home=home)
    print("From the floor on (the default):")
    for window in mine.windows():
        print(f"  {window.window_id} {window.kind}: {window.items} items")
    above = mine.search("deploy")
    for hit in above:
        print(f"  #{hit.item_id} {hit.label}: {hit.snippet}")

    everything = segue.open_history(WORKSPACE, home=home, include_cleared=True)
    print("Everything, also what /clear --soft cleared:")
    for window in everything.windows():
        print(f"  {window.window_id} {window.kind}: {window.items} items")
    oldest = everything.windows()[0].first_item_id or ""
    (first,) = everything.read(oldest)
    print(f"  #{oldest} {first.label}: {first.text}")

    model = mine.as_model()
    print("As the model's session_history tool answers, one item per page:")
    pages = list(model.pages({"action": "search", "query": "deploy", "limit": 1}))
    for page in pages:
        for item in page["items"]:
            print(f"  #{item['itemId']} {item['role']}: {item['text']}")
    print(f"  ({len(pages)} calls; every answer: {pages[0]['notice']!r})")
    vault = model.search("vault")
    print(f"  search 'vault' -> {len(vault['items'])} items (below the floor)")

    ok = (
        [w.kind for w in everything.windows()] == ["root", "reset"]
        and not any("vault" in h.snippet for h in above)
        and "vault" in first.text
        and vault["ok"] and vault["items"] == []
        # the same items as a person's search finds (in the tool's own relevance order)
        and sorted(i["itemId"] for p in pages for i in p["items"])
        == sorted(h.item_id for h in above)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="segue-example-") as tmp:
        given = os.environ.get("SEGUE_HOME")
        sys.exit(main(Path(given) if given else Path(tmp) / "home", Path(tmp)))
