"""Issue cases 1 and 3 (SPEC.md R38): a remembered ``bash`` rule approves what the user saw
and nothing the command can do beyond it, through the real ``segue run``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.helpers import bash, git_repo, run

#: The pattern the old "always" stored for a program: any arguments without shell syntax.
OLD_ALWAYS = r"( [^;&|`$<>()\\\n\r]*)?"

ATTACKS = [
    # (what the user once allowed, the command the model sends, the file it must not make)
    ("find", "find . -exec touch ../made-find {} +", "made-find"),
    ("find", "find . -name f.txt -execdir touch ../../made-find {} ;", "made-find"),
    ("sed", "sed -n '1e touch ../made-sed' f.txt", "made-sed"),
    ("sed", "sed -n 's/one/touch ..\\/made-sed/e' f.txt", "made-sed"),
    ("sed", "sed -n '1w ../made-sed' f.txt", "made-sed"),
    ("perl", "perl -e 'exec q{touch ../made-perl}'", "made-perl"),
    ("python3", "python3 -c 'open(\"../made-py\",\"w\")'", "made-py"),
    ("tar", "tar -cf ../x.tar --checkpoint=1 --checkpoint-action=exec='touch ../made-tar' f.txt",
     "made-tar"),
    ("git diff", "git diff --output=../made-diff", "made-diff"),
    ("git log", "git log --output=../made-log", "made-log"),
    ("git", "git -c alias.st=!touch\\ ../made-alias st", "made-alias"),
]


@pytest.mark.parametrize(("allowed", "command", "made"), ATTACKS)
def test_an_always_rule_never_runs_what_its_program_can_do_beyond_it(
    tmp_path: Path, allowed: str, command: str, made: str
) -> None:
    git_repo(tmp_path / "work")
    rules = [f"bash:{allowed}{OLD_ALWAYS}", f"bash:{allowed} .*"]
    # A plain call the same rules cover runs: the rules are in force.
    plain = {"find": "find . -name f.txt", "git diff": "git diff --stat",
             "git log": "git log --oneline", "git": "git status --short"}.get(
        allowed, f"{allowed} --version")
    result = run(tmp_path, [bash(plain), bash(command)], rules=rules)
    ran, refused = result.outputs
    assert ran["ok"] is True and ran["exitCode"] == 0, ran
    assert refused["error"]["code"] == "approval_denied"
    assert "does not cover this call" in refused["error"]["message"]
    assert not (tmp_path / made).exists()


@pytest.mark.parametrize("rule", ["bash:git status( --short)?", "bash:git status.*"])
def test_the_readme_rule_allows_git_status_and_never_a_chain(tmp_path: Path, rule: str) -> None:
    """Today's README rule, and the one it used to show (which let ``git status; touch X``
    run): neither approves a chain."""
    git_repo(tmp_path / "work")
    result = run(tmp_path, [
        bash("git status --short"),
        bash("git status; touch ../made-chain"),
        bash("git status && touch ../made-chain"),
        bash("git status $(touch ../made-chain)"),
        bash("git status --short > ../made-chain"),
    ], rules=[rule])
    first, *rest = result.outputs
    assert first["exitCode"] == 0 and "f.txt" in first["output"]
    assert [o["error"]["code"] for o in rest] == ["approval_denied"] * 4
    assert not (tmp_path / "made-chain").exists()


def test_the_docs_no_longer_show_a_rule_that_chains() -> None:
    root = Path(__file__).resolve().parents[2]
    texts = [root / "README.md", *sorted((root / "docs").glob("**/*.md"))]
    shown = [p for p in texts if p.exists() and "bash:git status.*" in p.read_text()]
    assert shown == []
    assert "bash:git status( --short)?" in (root / "README.md").read_text()


def test_always_remembers_exactly_the_command_shown(tmp_path: Path) -> None:
    """The narrowest rule: answering "always" to ``git status`` does not approve
    ``git status --porcelain``. Through the library session, whose approver answers."""
    import segue
    from segue import Answer

    git_repo(tmp_path / "work")
    home = tmp_path / "home"
    script = tmp_path / "s.json"
    import json

    script.write_text(json.dumps({"contextWindow": 64000, "encoding": "o200k_base",
                                  "responses": [bash("git status"), {"text": "done"},
                                                bash("git status --porcelain"),
                                                {"text": "done"}]}))
    asked: list[str] = []

    def approver(request: segue.ApprovalRequest) -> Answer:
        asked.append(request.preview)
        return Answer.ALWAYS if len(asked) == 1 else Answer.NO

    with segue.open_session("sec", home=home, workdir=tmp_path / "work",
                            model=f"scripted:{script}", approver=approver) as session:
        session.send("one")
        session.send("two")
    assert asked == ["git status", "git status --porcelain"]
    rules = json.loads((home / "approvals" / "sec.json").read_text())["rules"]
    assert [r["regex_match"] for r in rules] == ["bash:git status"]
