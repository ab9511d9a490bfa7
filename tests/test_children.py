"""Child workspaces (R41): ids, links, and who may read whom. Property tests over the many
ways an id can be spelt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segue import Layout
from segue._children import (
    NotATask,
    child_id,
    create_child,
    descendant,
    read_link,
    tree_order,
)
from segue._workspace import validate_workspace_id

WORKSPACE_IDS = st.from_regex(r"[A-Za-z0-9._-]{1,64}", fullmatch=True).filter(
    lambda s: s not in (".", ".."))


@given(WORKSPACE_IDS, st.integers(min_value=1, max_value=10_000))
def test_a_child_id_is_always_a_valid_workspace_id(parent: str, n: int) -> None:
    wid = child_id(parent, n)
    assert validate_workspace_id(wid) == wid and wid.endswith(f".t{n}")
    assert child_id(parent, n) == wid  # stable
    assert wid != parent and child_id(parent, n + 1) != wid


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("home")
    a = create_child(root, "parent", agent="explore", prompt="p", now_ms=1)
    create_child(root, a.workspace_id, agent="exec", prompt="q", now_ms=2)
    create_child(root, "other", agent="exec", prompt="r", now_ms=3)
    return root


def test_links_tie_children_to_parents(home: Path) -> None:
    assert descendant(home, "parent", "parent.t1").workspace_id == "parent.t1"
    assert descendant(home, "parent", "parent.t1.t1").workspace_id == "parent.t1.t1"
    assert descendant(home, "parent.t1", "parent.t1.t1").workspace_id == "parent.t1.t1"
    for reader, target in [("parent.t1", "parent"), ("parent.t1.t1", "parent.t1"),
                           ("parent", "other.t1"), ("other", "parent.t1")]:
        with pytest.raises(NotATask):
            descendant(home, reader, target)
    link = read_link(Layout(home, "parent.t1"))
    assert link is not None and (link.parent, link.agent, link.status) == (
        "parent", "explore", "running")


@settings(max_examples=200)
@given(st.one_of(st.text(max_size=80), st.integers(), st.none(), st.lists(st.text())))
def test_any_other_task_id_is_refused_in_one_line(home: Path, task_id: object) -> None:
    if task_id in ("parent.t1", "parent.t1.t1"):
        return
    with pytest.raises(NotATask) as caught:
        descendant(home, "parent", task_id)
    assert "\n" not in str(caught.value) and str(caught.value)


def test_a_forged_or_damaged_link_makes_nobody_a_child(tmp_path: Path) -> None:
    for name, content in [("a.t1", "not json"), ("a.t2", json.dumps(["a"])),
                          ("a.t3", json.dumps({"parent": "bad id!", "agent": "x"})),
                          ("a.t4", json.dumps({"parent": "a"}))]:
        layout = Layout(tmp_path, name)
        layout.session_dir.mkdir(parents=True)
        (layout.session_dir / "segue-task.json").write_text(content)
        assert read_link(layout) is None
        with pytest.raises(NotATask):
            descendant(tmp_path, "a", name)


def test_tree_order_puts_children_under_parents_and_survives_cycles() -> None:
    order = tree_order({"b": None, "a": None, "a.t1": "a", "a.t1.t1": "a.t1", "x": "gone",
                        "c1": "c2", "c2": "c1"})
    assert order == [("a", 0), ("a.t1", 1), ("a.t1.t1", 2), ("b", 0), ("x", 0),
                     ("c1", 0), ("c2", 1)]
