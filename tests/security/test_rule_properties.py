"""Property tests of R38's remembered rules: generated commands × rules. A remembered rule
never approves a command that runs or writes something beyond the words the rule was made
for (shell syntax, or an argument of the refusal table), however broad its pattern; and the
parser reads every plainly quoted command back as exactly its words."""

from __future__ import annotations

import re
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from segue._policy.approval import Mode, Verdict, approval_rule, decide, suggested_pattern
from segue._policy.shell_words import simple_command

BASES = ["git status", "git diff", "git log", "ls", "cat", "grep -n", "find .", "sed -n",
         "tar -tf", "perl", "python3", "echo", "sort", "curl", "node"]
PLAIN = st.text(alphabet="abcxyz019_./=,:+-", min_size=1, max_size=8)

#: Syntax that makes the shell do more than run the words shown.
SYNTAX = ["; touch X", "&& touch X", "|| touch X", "| sh", "& touch X", "$(touch X)",
          "`touch X`", "> X", ">> X", "< /etc/passwd", "2> X", "<(touch X)", "\ntouch X",
          "\r touch X", "$HOME", "${IFS}", "$((1))", "$'\\x3b'", "-ex*", "-exe?", "[-]exec",
          "-{exec,x}", "{a,b}", "# hidden", "\x1b[2K", "\u202etouch"]
#: Arguments of the refusal table, with the program they belong to. A sed script (quoted)
#: goes first: later plain words are the files it reads.
TABLE = [
    ("find .", "-exec touch X {} +"), ("find .", "-execdir touch X ;"), ("find .", "-delete"),
    ("find .", "-fprint X"), ("find .", "-ok touch X ;"), ("sed -n", "'1e touch X'"),
    ("sed -n", "s/a/b/e"), ("sed -n", "'w X'"), ("sed -n", "-e 's/a/b/w X'"), ("sed -n", "-i"),
    ("sed -n", "--in-place"),
    ("perl", "-e exec"), ("perl", "-ne print"), ("python3", "-c pass"), ("node", "-e 1"),
    ("node", "--eval=1"), ("tar -tf", "--checkpoint-action=exec=touch"),
    ("tar -tf", "--to-command=sh"), ("tar -tf", "-I sh"), ("git diff", "--output=/tmp/X"),
    ("git log", "--output=X"), ("git status", "--exec=sh"), ("sort", "-o X"),
    ("sort", "--output=X"), ("curl", "-o X"), ("curl", "-O"), ("grep -n", "--pager=sh"),
]
WRAPPERS = ["env", "sudo", "xargs", "nohup", "timeout 5", "bash -c", "sh -c", "awk", "eval",
            "git -c core.pager=sh", "git -C /tmp", "git --git-dir=/tmp/x", "git st",
            "git config", "git submodule foreach", "PAGER=sh", "X=1"]


def _rules(command: str, program: str) -> list[str]:
    """Rules that match the command's text: the exact one, and broader ones that name only
    the program."""
    return [
        suggested_pattern("bash", {"command": command}),
        "bash:" + re.escape(command),
        f"bash:{re.escape(program)}.*",
        f"bash:{re.escape(program)}( .*)?",
        r"bash:[\s\S]*",
        "bash:.*",
        f"bash:{re.escape(program.split(maxsplit=1)[0])}" + r"( [^;&|`$<>()\\\n\r]*)?",
    ]


def _never_allowed(command: str, program: str) -> None:
    subject = f"bash:{command}"
    matching = [r for r in _rules(command, program) if approval_rule(r).matches(subject)]
    assert matching, command  # the comparison is not vacuous: some rule does match
    for mode in (Mode.ASK, Mode.AUTO_EDIT):
        for pattern in matching:
            got = decide(mode, "bash", {"command": command}, read_only=False,
                         rules=[approval_rule(pattern)])
            assert got.verdict is Verdict.ASK, (command, pattern, got)


@settings(max_examples=300)
@given(st.sampled_from(BASES), st.lists(PLAIN, max_size=3), st.sampled_from(SYNTAX),
       st.integers(min_value=0, max_value=3))
def test_shell_syntax_is_never_approved_by_a_rule(
    base: str, words: list[str], syntax: str, at: int
) -> None:
    words.insert(min(at, len(words)), syntax)
    _never_allowed(" ".join([base, *words]), base)


@settings(max_examples=300)
@given(st.sampled_from(TABLE), st.lists(PLAIN, max_size=3), st.integers(0, 3))
def test_a_table_argument_is_never_approved_by_a_rule(
    entry: tuple[str, str], words: list[str], at: int
) -> None:
    base, argument = entry
    script = base.startswith("sed") and not argument.startswith("-")
    words.insert(0 if script else min(at, len(words)), argument)
    _never_allowed(" ".join([base, *words]), base)


@settings(max_examples=200)
@given(st.sampled_from(WRAPPERS), st.sampled_from(BASES), st.lists(PLAIN, max_size=3))
def test_a_program_that_runs_programs_is_never_approved_by_a_rule(
    wrapper: str, base: str, words: list[str]
) -> None:
    _never_allowed(" ".join([wrapper, base, *words]), wrapper)


SAFE = ["git status", "git diff --stat", "git log --oneline", "ls -la", "cat README.md",
        "grep -n needle src", "find . -name x.py", "sed -n 1,5p f", "tar -tf a.tar", "wc -l f"]


@given(st.sampled_from(SAFE))
def test_the_exact_rule_approves_the_plain_command_it_was_made_for(command: str) -> None:
    rule = approval_rule(suggested_pattern("bash", {"command": command}))
    got = decide(Mode.ASK, "bash", {"command": command}, read_only=False, rules=[rule])
    assert got.verdict is Verdict.ALLOW


ARG = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn")),
              min_size=1, max_size=12)


@settings(max_examples=300)
@given(st.sampled_from(["ls", "git", "grep", "echo"]), st.lists(ARG, max_size=5))
def test_a_quoted_command_reads_back_as_exactly_its_words(program: str, args: list[str]) -> None:
    words = simple_command(shlex.join([program, *args]))
    # shlex quotes everything that is not plain; so the parser sees only literal words.
    assert words.argv == (program, *args), words.why
