"""Tool policy (R12, R13): rule tables, agent files, base chains, caller restrictions."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue import UsageError, resolve_agent
from segue._policy import (
    BUILTIN_AGENTS,
    SESSION_HISTORY_TOOL,
    Action,
    AgentDefinitionError,
    RuleSet,
    ToolPolicy,
    UnknownAgentError,
    allow_only,
    allowed_tools,
    available_agents,
    can_use_session_history,
    may_use,
    rule,
)
from segue._policy.frontmatter import FrontMatterError, split_document

TOOLS = ("file_read", "file_write", "file_edit", "file_search", "bash", "memory",
         SESSION_HISTORY_TOOL)


def rules(*pairs: tuple[str, str]) -> ToolPolicy:
    return ToolPolicy(RuleSet(tuple(rule(p, a) for p, a in pairs)))


# -- rule evaluation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pairs", "tool", "allowed"),
    [
        ((), "bash", False),  # nothing matches: default deny
        ((("bash", "enable"),), "bash", True),
        ((("bash", "enable"),), "bash2", False),  # anchored at the end
        ((("bash", "enable"),), "xbash", False),  # anchored at the start
        ((("file_.*", "enable"),), "file_read", True),
        ((("file_.*", "enable"),), "my_file_read", False),
        ((("^file_read$", "enable"),), "file_read", True),  # explicit anchors are harmless
        ((("file_read|bash", "enable"),), "bash", True),  # alternation is anchored as a whole
        ((("file_read|bash", "enable"),), "file_read_more", False),
        ((("a|b", "enable"),), "ab", False),
        (((".*", "enable"), ("bash", "disable")), "bash", False),  # later rule wins
        ((("bash", "disable"), (".*", "enable")), "bash", True),  # later rule wins again
        (((".*", "enable"), ("bash", "disable")), "file_read", True),
        (((".*", "enable"), ("file_.*", "disable"), ("file_read", "enable")), "file_read", True),
        (((".*", "enable"), ("file_.*", "disable"), ("file_read", "enable")), "file_edit", False),
        ((("session_.*", "disable"),), SESSION_HISTORY_TOOL, False),
    ],
)
def test_last_matching_rule_wins(
    pairs: tuple[tuple[str, str], ...], tool: str, allowed: bool
) -> None:
    assert may_use(rules(*pairs), tool) is allowed


def test_bad_rules_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="not a valid regex"):
        rule("file_(read", Action.ENABLE)
    with pytest.raises(UsageError, match="action must be"):
        rule("bash", "allow")
    with pytest.raises(UsageError, match="empty"):
        rule("", "enable")


def test_caller_restriction_only_narrows() -> None:
    everything = rules((".*", "enable"))
    narrow = rules(("file_read", "enable"), (SESSION_HISTORY_TOOL, "enable"))
    restriction = allow_only(["file_read", "bash"])
    # Restricting an all-powerful agent narrows it to the restriction.
    assert allowed_tools(everything.narrowed(restriction), TOOLS) == ("file_read", "bash")
    # A restriction naming tools the agent lacks never grants them.
    assert allowed_tools(narrow.narrowed(restriction), TOOLS) == ("file_read",)
    # A restriction that enables everything changes nothing.
    assert allowed_tools(narrow.narrowed(RuleSet((rule(".*", "enable"),))), TOOLS) == (
        "file_read", SESSION_HISTORY_TOOL)
    # Layers stack: each one can only take away.
    twice = everything.narrowed(restriction).narrowed(allow_only(["bash"]))
    assert allowed_tools(twice, TOOLS) == ("bash",)
    assert not can_use_session_history(twice)


def test_allow_only_matches_names_literally() -> None:
    policy = rules((".*", "enable")).narrowed(allow_only(["file.read"]))
    assert may_use(policy, "file.read")
    assert not may_use(policy, "file_read")


# -- built-in agents ---------------------------------------------------------------------------


def test_builtins_grant_everything(tmp_path: Path) -> None:
    for name in BUILTIN_AGENTS:
        agent = resolve_agent(name, tmp_path)
        assert allowed_tools(agent.policy(), TOOLS) == TOOLS, name
        assert can_use_session_history(agent.policy())
        assert agent.prompt, name
        assert agent.source == f"built-in:{name}"


def test_explore_inherits_exec(tmp_path: Path) -> None:
    explore = resolve_agent("explore", tmp_path)
    exec_agent = resolve_agent("exec", tmp_path)
    assert explore.lineage == ("explore", "exec")
    assert explore.rules == exec_agent.rules
    assert explore.prompt != exec_agent.prompt  # its own body wins over the base's


# -- custom agents -----------------------------------------------------------------------------


def write_agent(workdir: Path, name: str, text: str) -> Path:
    directory = workdir / ".segue" / "agents"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_narrow_custom_agent_without_session_history(tmp_path: Path) -> None:
    write_agent(tmp_path, "reader", "---\nname: reader\ntools:\n  add: [file_read, file_search]\n"
                "---\nRead only.\n")
    agent = resolve_agent("reader", tmp_path)
    assert agent.lineage == ("reader",)
    assert allowed_tools(agent.policy(), TOOLS) == ("file_read", "file_search")
    assert not can_use_session_history(agent.policy())
    assert agent.prompt == "Read only."


def test_custom_agent_without_base_or_tools_has_no_tools(tmp_path: Path) -> None:
    write_agent(tmp_path, "mute", "---\ndescription: talks only\n---\nJust talk.\n")
    agent = resolve_agent("mute", tmp_path)
    assert allowed_tools(agent.policy(), TOOLS) == ()
    assert agent.description == "talks only"


def test_custom_agent_adding_session_history_may_roll_over(tmp_path: Path) -> None:
    write_agent(tmp_path, "reader", "---\ntools:\n  add:\n    - file_read\n    - 'session_.*'\n"
                "---\n")
    agent = resolve_agent("reader", tmp_path)
    assert can_use_session_history(agent.policy())
    assert not may_use(agent.policy(), "bash")
    # A caller restriction that leaves session_history out blocks it again.
    assert not can_use_session_history(agent.policy(allow_only(["file_read"])))


def test_custom_agent_on_exec_base_removes_and_remove_beats_add(tmp_path: Path) -> None:
    write_agent(tmp_path, "careful", "---\nbase: exec\ntools: {add: [bash], remove: [bash, "
                "'file_(write|edit)']}\n---\n")
    agent = resolve_agent("careful", tmp_path)
    assert allowed_tools(agent.policy(), TOOLS) == (
        "file_read", "file_search", "memory", SESSION_HISTORY_TOOL)
    # No body: the prompt comes from the base.
    assert agent.prompt == resolve_agent("exec", tmp_path).prompt


def test_chain_child_can_re_enable_what_base_removed(tmp_path: Path) -> None:
    write_agent(tmp_path, "base1", "---\nbase: exec\ntools:\n  remove: ['.*']\n---\nB1\n")
    write_agent(tmp_path, "child", "---\nbase: base1\nmodel: scripted:x.json\ntools:\n"
                "  add: [memory]\n---\n")
    agent = resolve_agent("child", tmp_path)
    assert agent.lineage == ("child", "base1", "exec")
    assert allowed_tools(agent.policy(), TOOLS) == ("memory",)
    assert agent.prompt == "B1"
    assert agent.model == "scripted:x.json"


def test_workspace_agent_may_shadow_and_extend_its_builtin(tmp_path: Path) -> None:
    write_agent(tmp_path, "exec", "---\nbase: exec\ntools:\n  remove: [bash]\n---\n")
    agent = resolve_agent("exec", tmp_path)
    assert agent.lineage == ("exec", "exec")
    assert not may_use(agent.policy(), "bash")
    assert may_use(agent.policy(), "file_read")
    # explore's base is now the workspace exec.
    assert not may_use(resolve_agent("explore", tmp_path).policy(), "bash")
    assert "exec" in available_agents(tmp_path)


def test_unknown_agent_lists_choices(tmp_path: Path) -> None:
    write_agent(tmp_path, "mine", "---\ntools: {add: [bash]}\n---\n")
    with pytest.raises(UnknownAgentError, match=r"'nope'.*exec, explore, mine, plan"):
        resolve_agent("nope", tmp_path)


@pytest.mark.parametrize("name", ["../etc", ".hidden", "", "a/b", "x" * 65])
def test_agent_names_cannot_escape_the_directory(tmp_path: Path, name: str) -> None:
    with pytest.raises(UsageError, match="invalid agent name"):
        resolve_agent(name, tmp_path)


def test_unknown_base_names_the_file(tmp_path: Path) -> None:
    path = write_agent(tmp_path, "orphan", "---\nbase: ghost\n---\n")
    with pytest.raises(UnknownAgentError, match=rf"'ghost' \(the base of {path}\)"):
        resolve_agent("orphan", tmp_path)


def test_base_cycles_are_errors(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", "---\nbase: b\n---\n")
    write_agent(tmp_path, "b", "---\nbase: a\n---\n")
    with pytest.raises(AgentDefinitionError, match="cycle: a -> b -> a"):
        resolve_agent("a", tmp_path)
    write_agent(tmp_path, "self", "---\nbase: self\n---\n")
    with pytest.raises(UnknownAgentError, match="'self'"):
        # "self" is not a built-in, so its self-reference has nothing to extend.
        resolve_agent("self", tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter\n", "must start with a '---'"),
        ("---\nbase: exec\n", "no closing '---'"),
        ("---\ntools:\n  add: ['file_(read']\n---\n", "not a valid regex"),
        ("---\ntools: [bash]\n---\n", "tools must be a mapping"),
        ("---\ntools:\n  allow: [bash]\n---\n", "unknown key.*allow"),
        ("---\ntools:\n  add: bash\n---\n", "must be a list"),
        ("---\ncolour: red\n---\n", "unknown key.*colour"),
        ("---\nname: other\n---\n", "does not match the file name"),
        ("---\nbase: exec\nbase: plan\n---\n", "line 3: duplicate key 'base'"),
        ("---\ntools:\n\tadd: [bash]\n---\n", "tabs"),
        ("---\ntools:\n  add: [*]\n---\n", "YAML indicator"),
        ("---\ntools:\n  add: [a{1,2}]\n---\n", "brackets inside a flow value"),
        ("---\ntools:\n  add: [\"\\d+\"]\n---\n", "use single quotes"),
        ("---\ntools:\n  add: [bash\n---\n", "expected ',' or ']'"),
        ("---\nmodel: gpt-4o\n---\n", "provider:name"),
        ("---\nbase: ../x\n---\n", "invalid agent name"),
        ("---\ntools:\n---\n", "'tools' has no value"),
    ],
)
def test_bad_agent_files_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = write_agent(tmp_path, "bad", text)
    with pytest.raises(AgentDefinitionError, match=message) as info:
        resolve_agent("bad", tmp_path)
    assert str(path) in info.value.message


def test_non_utf8_agent_file(tmp_path: Path) -> None:
    path = write_agent(tmp_path, "bin", "")
    path.write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(AgentDefinitionError, match="not UTF-8"):
        resolve_agent("bin", tmp_path)


# -- front matter subset -----------------------------------------------------------------------


def test_front_matter_subset() -> None:
    doc = split_document(
        "\ufeff---\r\n"
        "# a comment\r\n"
        "name: x   # trailing comment\r\n"
        "tools:\r\n"
        "  add:\r\n"
        "  - file_[a-z]+\r\n"
        "  - 'it''s#not a comment'\r\n"
        "  - \"tab\\there\"\r\n"
        "  remove: [bash, 'c,d', yes, null, ]\r\n"
        "description: a#b\r\n"
        "---\r\n\r\nThe body\r\n"
    )
    assert doc.front_matter == {
        "name": "x",
        "tools": {
            "add": ["file_[a-z]+", "it's#not a comment", "tab\there"],
            "remove": ["bash", "c,d", "yes", "null"],  # no implicit typing
        },
        "description": "a#b",
    }
    assert doc.body == "The body\r\n"


def test_front_matter_flow_mapping_and_empty_lists() -> None:
    doc = split_document("---\ntools: {add: [], remove: ['x']}\n---\n")
    assert doc.front_matter == {"tools": {"add": [], "remove": ["x"]}}


def test_front_matter_errors_name_the_line() -> None:
    with pytest.raises(FrontMatterError, match="line 3"):
        split_document("---\nname: a\n  oops: b\n---\n")
