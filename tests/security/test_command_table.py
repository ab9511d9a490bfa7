"""The refusal table of R38, entry by entry (README: "What a remembered rule never approves"):
each command is refused (a remembered rule may not approve it) or plain, with the reason."""

from __future__ import annotations

import pytest

from segue._policy.approval import bash_hazard

REFUSED = [
    ("find . -exec touch X {} +", "-exec"), ("find . -execdir rm {} ;", "shell syntax"),
    ("find . -delete", "-delete"), ("find . -okdir x {} +", "-okdir"),
    ("find . -fprint out", "-fprint"), ("sed -n '1e id' f", "`e`"),
    ("sed 's/a/b/e' f", "flags"), ("sed -n 'w out' f", "`w`"), ("sed -i s/a/b/ f", "-i"),
    ("sed --in-place=.bak s/a/b/ f", "--in-place"), ("sed -f script.sed f", "-f"),
    ("sed -n -e '$!{h;d};x;e id' f", "`e`"), ("perl -e 'exec q{id}'", "-e"),
    ("perl -pi -e s/a/b/ f", "-e"), ("python3 -c 'import os'", "-c"),
    ("python3.12 -W ignore -c pass", "-c"), ("ruby -e 'system 1'", "-e"),
    ("node --eval=1", "--eval"), ("node -pe 1", "-pe"), ("php -r 'x();'", "-r"),
    ("tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id .", "--checkpoint-action"),
    ("tar -xf a.tar --to-command sh", "--to-command"), ("tar -I sh -xf a.tar", "-I"),
    ("tar xCf /etc a.tar", "-C"), ("git -c core.fsmonitor=id status", "git -c"),
    ("git -C /elsewhere status", "git -C"), ("git --git-dir=/x status", "--git-dir"),
    ("git st", "alias"), ("git config alias.st '!id'", "git config"),
    ("git diff --output=/tmp/x", "--output"), ("git log --output ../x", "--output"),
    ("git format-patch -o /tmp HEAD~1", "-o"), ("git rebase -x id HEAD~1", "-x"),
    ("git fetch --upload-pack=id origin", "--upload-pack"), ("git grep -Ovim x", "-Ovim"),
    ("git submodule foreach id", "submodule"), ("xargs rm", "xargs"), ("env", "env"),
    ("env -i ls", "env"), ("sudo ls", "sudo"), ("timeout 5 ls", "timeout"),
    ("bash -c ls", "shell"), ("awk '{system(\"id\")}' f", "awk"), ("sort -o out in", "-o"),
    ("curl -o out https://example.com", "-o"), ("curl -O https://example.com/x", "-O"),
    ("wget -O out https://example.com", "-O"), ("dd if=a of=b", "of="),
    ("rsync -e sh a b", "-e"), ("sqlite3 db .shell", ".shell"),
    ("git status; touch X", "shell syntax"), ("ls > out", "shell syntax"),
    ("ls *.py", "glob"), ("find . -{exec,x} id +", "brace"), ("PAGER=id git log", "variable"),
    ("echo $HOME", "shell syntax"), ("ls\ntouch X", "more than one line"),
    ("ls \x1b[2K", "invisible"), ("git status # x", "comment"), ("echo 'unterminated", "cannot"),
]
PLAIN = [
    "git status", "git status --short", "git diff --stat", "git log --oneline -5",
    "git --no-pager log", "git add -u", "git rebase -i HEAD~2", "ls -la", "cat README.md",
    "grep -n -o needle src/x.py", "find . -name '*.py'", "find . -name a -o -name b",
    "sed -n 1,5p f", "sed 's/a/b/g' f", "sed -E 's/(a)/\\1/' f", "tar -tf a.tar",
    "tar xzf a.tgz", "python3 -m pytest -q", "python3 script.py --flag", "npm test",
    "echo \"quoted text\"", "ls 'a b' c\\ d",
]


@pytest.mark.parametrize(("command", "why"), REFUSED)
def test_refused_with_its_reason(command: str, why: str) -> None:
    reason = bash_hazard(command)
    assert reason is not None, command
    assert why in reason, (command, reason)


@pytest.mark.parametrize("command", PLAIN)
def test_plain_commands_may_be_remembered(command: str) -> None:
    assert bash_hazard(command) is None
