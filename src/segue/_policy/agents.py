"""Agent definitions and their resolution into a tool policy (SPEC.md R12, §5). Pure.

An agent is a markdown file: front matter (``name``, ``base``, ``tools: {add, remove}``,
``model``, ``description``) and the system prompt as its body. Resolution walks the ``base``
chain to its root and folds it into one ordered rule list:

* the root starts with **no tools** (a custom agent without ``base`` grants nothing it does not
  add; the built-ins ``exec`` and ``plan`` grant everything by adding ``.*``);
* each agent down the chain appends its ``add`` entries as ``enable`` rules, then its
  ``remove`` entries as ``disable`` rules, after everything it inherited, so with last match
  wins a child can narrow or widen what its base allowed, and ``remove`` beats ``add`` within
  one file;
* the prompt is the agent's own body, or, when the body is empty, the nearest ancestor's;
  ``model`` likewise comes from the nearest agent that sets it.

Where definitions come from is the caller's business (:mod:`segue._policy.loader` reads the
package's built-ins and ``<workdir>/.segue/agents``): this module only sees a lookup function.
A workspace agent may shadow a built-in of the same name; its ``base`` may then name that
built-in (``exec.md`` with ``base: exec`` extends the built-in ``exec``). Any other repeat in a
chain is a cycle and an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from segue._errors import AgentDefinitionError, UnknownAgentError, UsageError
from segue._policy.frontmatter import FrontMatterError, Value, split_document
from segue._policy.rules import Action, Rule, RuleSet, ToolPolicy, rule

BUILTIN_AGENTS: tuple[str, ...] = ("exec", "plan", "explore")
DEFAULT_AGENT = "exec"

#: Agent names are file stems: no path separators, no leading dot (no ``..``), bounded.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_KEYS = frozenset({"name", "base", "tools", "model", "description"})
_TOOL_KEYS = frozenset({"add", "remove"})
#: A base chain longer than this is almost certainly a mistake; it also bounds the walk.
MAX_CHAIN = 16


@dataclass(frozen=True)
class AgentSpec:
    """One agent file, parsed but not resolved against its base."""

    name: str
    base: str | None
    add: tuple[Rule, ...]
    remove: tuple[Rule, ...]
    model: str | None
    description: str | None
    prompt: str
    source: str
    builtin: bool


@dataclass(frozen=True)
class Agent:
    """A resolved agent: the effective rules of its whole chain."""

    name: str
    rules: RuleSet
    prompt: str
    model: str | None
    description: str | None
    source: str
    #: This agent's name, then its base's, and so on to the root.
    lineage: tuple[str, ...]

    def policy(self, *restrictions: RuleSet) -> ToolPolicy:
        """The agent's tool policy, narrowed by any caller restrictions."""
        return ToolPolicy(self.rules, tuple(restrictions))


def validate_agent_name(name: str) -> str:
    if not _NAME_RE.fullmatch(name):
        raise UsageError(
            f"invalid agent name {name!r}: use 1-64 characters from [A-Za-z0-9._-], "
            "starting with a letter or digit"
        )
    return name


def parse_agent(text: str, *, name: str, source: str, builtin: bool = False) -> AgentSpec:
    """Parse one agent file. ``name`` is its file stem; ``source`` names it in errors."""
    try:
        document = split_document(text)
    except FrontMatterError as exc:
        raise AgentDefinitionError(source, exc.message) from None
    front = document.front_matter
    unknown = sorted(set(front) - _KEYS)
    if unknown:
        raise AgentDefinitionError(
            source, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS))}"
        )
    declared = _optional_str(front, "name", source)
    if declared is not None and declared != name:
        raise AgentDefinitionError(
            source, f"name {declared!r} does not match the file name {name!r}"
        )
    base = _optional_str(front, "base", source)
    if base is not None:
        try:
            validate_agent_name(base)
        except UsageError as exc:
            raise AgentDefinitionError(source, f"base: {exc.message}") from None
    model = _optional_str(front, "model", source)
    if model is not None and ":" not in model:
        raise AgentDefinitionError(source, f"model {model!r} must be written 'provider:name'")
    add, remove = _tools(front.get("tools"), source)
    return AgentSpec(
        name=name,
        base=base,
        add=add,
        remove=remove,
        model=model,
        description=_optional_str(front, "description", source),
        prompt=document.body.strip(),
        source=source,
        builtin=builtin,
    )


def _optional_str(front: dict[str, Value], key: str, source: str) -> str | None:
    value = front.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AgentDefinitionError(source, f"{key} must be a non-empty string")
    return value.strip()


def _tools(value: Value | None, source: str) -> tuple[tuple[Rule, ...], tuple[Rule, ...]]:
    if value is None:
        return (), ()
    if not isinstance(value, dict):
        raise AgentDefinitionError(source, "tools must be a mapping with 'add' and/or 'remove'")
    unknown = sorted(set(value) - _TOOL_KEYS)
    if unknown:
        raise AgentDefinitionError(
            source, f"unknown key(s) under tools: {', '.join(unknown)}; allowed: add, remove"
        )
    return (
        _rules(value.get("add"), Action.ENABLE, "tools.add", source),
        _rules(value.get("remove"), Action.DISABLE, "tools.remove", source),
    )


def _rules(value: Value | None, action: Action, key: str, source: str) -> tuple[Rule, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AgentDefinitionError(source, f"{key} must be a list of tool names or patterns")
    out: list[Rule] = []
    for pattern in value:
        assert isinstance(pattern, str)  # narrowed by the check above
        try:
            out.append(rule(pattern, action))
        except UsageError as exc:
            raise AgentDefinitionError(source, f"{key}: {exc.message}") from None
    return tuple(out)


#: ``lookup(name, builtin_only)`` returns the definition of ``name`` or None when there is
#: none. With ``builtin_only`` it must skip workspace definitions.
AgentLookup = Callable[[str, bool], AgentSpec | None]


def resolve(name: str, lookup: AgentLookup, available: Sequence[str] = ()) -> Agent:
    """Resolve ``name`` and its base chain into an :class:`Agent`."""
    validate_agent_name(name)
    spec = lookup(name, False)
    if spec is None:
        raise UnknownAgentError(name, available)
    chain = [spec]
    seen = {(spec.name, spec.builtin)}
    while chain[-1].base is not None:
        child = chain[-1]
        base_name = child.base
        assert base_name is not None  # the loop condition
        # A workspace agent naming its own name as base extends the built-in it shadows.
        builtin_only = base_name == child.name and not child.builtin
        parent = lookup(base_name, builtin_only)
        if parent is None:
            raise UnknownAgentError(base_name, available, referenced_by=child.source)
        if (parent.name, parent.builtin) in seen:
            names = " -> ".join([*(c.name for c in chain), parent.name])
            raise AgentDefinitionError(child.source, f"base chain has a cycle: {names}")
        if len(chain) >= MAX_CHAIN:
            raise AgentDefinitionError(spec.source, f"base chain longer than {MAX_CHAIN}")
        seen.add((parent.name, parent.builtin))
        chain.append(parent)
    rules = RuleSet()
    for layer in reversed(chain):
        rules = rules.then(layer.add).then(layer.remove)
    prompt = next((c.prompt for c in chain if c.prompt), "")
    model = next((c.model for c in chain if c.model is not None), None)
    return Agent(
        name=spec.name,
        rules=rules,
        prompt=prompt,
        model=model,
        description=spec.description,
        source=spec.source,
        lineage=tuple(c.name for c in chain),
    )
