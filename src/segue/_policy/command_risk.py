"""Arguments that make a program run another program or write where the user did not look
(SPEC.md R38). Pure: a table over a command's words (its ``argv``, quotes already removed).

A remembered ``bash`` rule never approves a call this table flags; the call asks (or is denied
where nobody can be asked), even when the rule's pattern matches its text. The table is the
README's "what is refused and why", one entry per line below; :func:`hazard` returns the
reason shown to the user and the model, or None when nothing in the table applies.

The table errs towards asking: an option it cannot read (an unknown ``git`` subcommand, which
may be an alias; a ``sed`` script it cannot follow) counts as a hazard.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NoReturn


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Programs whose job is to run another program or arbitrary code given as an argument.
RUNS_PROGRAMS: dict[str, str] = {
    **dict.fromkeys(
        ("env", "sudo", "doas", "su", "pkexec", "runuser", "sg", "xargs", "nohup", "nice",
         "ionice", "timeout", "time", "command", "builtin", "exec", "eval", "source", ".",
         "stdbuf", "setsid", "chroot", "unshare", "nsenter", "strace", "ltrace", "gdb",
         "lldb", "valgrind", "watch", "parallel", "flock", "script", "expect", "unbuffer",
         "coproc", "trap", "fc", "systemd-run", "at", "batch", "crontab", "busybox", "chrt",
         "taskset", "prlimit", "firejail", "bwrap", "fakeroot", "caffeinate", "open",
         "xdg-open"),
        "runs the program named in its arguments",
    ),
    **dict.fromkeys(
        ("sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "pwsh",
         "powershell"),
        "is a shell: it runs whatever its arguments say",
    ),
    **dict.fromkeys(
        ("awk", "gawk", "mawk", "nawk"),
        "runs an awk program, which can run commands (system()) and write files",
    ),
    **dict.fromkeys(
        ("vi", "vim", "nvim", "view", "ex", "emacs", "nano", "less", "more", "man", "ed"),
        "is an interactive program that can run shell commands",
    ),
    **dict.fromkeys(
        ("ssh", "scp", "sftp"),
        "runs commands on another machine or through a configured proxy command",
    ),
}

#: Interpreters and the short options that hand them code to run inline (``-c``, ``-e``…).
_INLINE_CODE: dict[str, tuple[str, tuple[str, ...]]] = {
    "python": ("c", ()),
    "pypy": ("c", ()),
    "perl": ("eEx", ()),
    "ruby": ("e", ()),
    "node": ("ep", ("--eval", "--print")),
    "nodejs": ("ep", ("--eval", "--print")),
    "bun": ("e", ("--eval", "--print")),
    "deno": ("", ("eval",)),
    "php": ("rBRFE", ()),
    "lua": ("e", ()),
    "luajit": ("e", ()),
    "rscript": ("e", ()),
    "r": ("e", ()),
    "osascript": ("e", ()),
    "tclsh": ("", ()),
    "jshell": ("", ()),
}

#: Options of any program that write to a path (``--output FILE``) or run a program.
_WRITES_ANYWHERE = re.compile(
    r"--(output|output-file|output-document|output-directory|outfile|out-file|log-file)(=.*)?"
)
_RUNS_ANYWHERE = re.compile(
    r"--(exec|execdir|rsh|rsync-path|eval|command|shell|use-compress-program|to-command"
    r"|checkpoint-action|info-script|new-volume-script|rmt-command|rsh-command|pager"
    r"|editor|unzip-command)(=.*)?"
)
#: Programs whose ``-o`` does not name a file to write (``grep -o`` prints only the match).
_O_IS_NOT_A_FILE = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ls", "ps", "pgrep", "pkill", "lsof", "mount", "jq",
     "git", "df", "du", "top", "uniq", "cut", "wc", "file", "stat", "ag", "ack", "find",
     "gfind", "test", "[", "tar", "gtar", "bsdtar"}
)

#: git's global options that run code, point it at another repository, or set config.
_GIT_GLOBAL_RISK = {
    "-c": "sets configuration for this call (an alias or core.fsmonitor runs any program)",
    "--config-env": "sets configuration for this call",
    "--exec-path": "runs git programs from another directory",
    "-C": "runs in another directory, whose configuration and hooks the user did not see",
    "--git-dir": "uses another repository, whose configuration and hooks the user did not see",
    "--work-tree": "uses another work tree",
    "--namespace": "uses another namespace",
}
_GIT_GLOBAL_WITH_VALUE = frozenset({"-c", "--config-env", "-C", "--git-dir", "--work-tree",
                                    "--namespace", "--exec-path", "--super-prefix"})
#: git's own commands. Any other subcommand may be an alias (``!sh -c …``) or a ``git-*``
#: program on the PATH.
_GIT_BUILTINS = _names(
    """add am annotate apply archive bisect blame branch bundle cat-file check-attr
    check-ignore check-mailmap check-ref-format checkout cherry cherry-pick citool clean clone
    column commit commit-graph commit-tree config count-objects describe diff diff-files
    diff-index diff-tree difftool fetch fmt-merge-msg for-each-ref for-each-repo format-patch
    fsck gc get-tar-commit-id grep hash-object help init interpret-trailers log ls-files
    ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-tree
    mergetool mktag mktree mv name-rev notes pack-objects prune pull push range-diff
    read-tree rebase reflog remote repack replace rerere reset restore rev-list rev-parse
    revert rm shortlog show show-branch show-ref sparse-checkout stash status stripspace
    submodule switch symbolic-ref tag unpack-objects update-index update-ref var
    verify-commit verify-pack verify-tag version whatchanged worktree write-tree"""
)
_GIT_RISKY_SUBCOMMANDS = {
    "config": "changes git configuration (aliases, core.fsmonitor, hooks path run programs)",
    "filter-branch": "runs the commands given as its filters",
    "bisect": "`git bisect run` runs a program",
    "submodule": "`git submodule foreach` runs a command",
    "difftool": "runs a diff program",
    "mergetool": "runs a merge program",
    "for-each-repo": "runs git in other repositories",
    "citool": "starts a program",
}
#: Subcommand options that run a program or write a file the command would not otherwise.
_GIT_RISKY_OPTIONS = re.compile(
    r"--(output|output-directory|exec|upload-pack|receive-pack|template|config"
    r"|separate-git-dir|open-files-in-pager|extcmd|tool|ext-diff)(=.*)?"
)
#: Subcommands whose short options are a path to write or a program to run.
_GIT_SHORT_RISK: dict[str, str] = {
    "format-patch": "o",
    "archive": "o",
    "fetch": "u",
    "pull": "u",
    "clone": "uc",
    "ls-remote": "u",
    "rebase": "x",
    "grep": "O",
}

#: find's actions that run programs or write files.
_FIND_RISK = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
#: tar's short options (bundled like ``-xzf`` or old style ``xzf``) that run or write elsewhere.
_TAR_SHORT_RISK = {
    "I": "runs a compression program",
    "F": "runs a script at each volume",
    "C": "extracts or reads in another directory",
    "P": "writes absolute paths",
}


def hazard(argv: Sequence[str]) -> str | None:
    """Why running ``argv`` may do more than its words show, or None."""
    if not argv:
        return None
    name = _program(argv[0])
    args = list(argv[1:])
    if name in RUNS_PROGRAMS:
        return f"`{name}` {RUNS_PROGRAMS[name]}"
    specific = _SPECIFIC.get(_interpreter(name) or name)
    if specific is not None:
        found = specific(name, args)
        if found is not None:
            return found
    for arg in args:
        if arg == "--":
            break
        if _WRITES_ANYWHERE.fullmatch(arg):
            return f"`{arg}` makes `{name}` write to a path"
        if _RUNS_ANYWHERE.fullmatch(arg):
            return f"`{arg}` makes `{name}` run another program"
        if name not in _O_IS_NOT_A_FILE and re.fullmatch(r"-o.*", arg):
            return f"`{arg}` makes `{name}` write to a path"
    return None


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _interpreter(name: str) -> str | None:
    """``python3.12`` → ``python``; None when ``name`` is no interpreter of the table."""
    stem = re.sub(r"[0-9.]+$", "", name).lower()
    return stem if stem in _INLINE_CODE else None


def _interpreter_risk(name: str, args: list[str]) -> str | None:
    letters, longs = _INLINE_CODE[_interpreter(name) or name]
    if not letters and not longs:
        return f"`{name}` runs code given on the command line"
    for arg in args:
        if arg in longs or any(arg.startswith(f"{o}=") for o in longs if o.startswith("--")):
            return f"`{arg}` makes `{name}` run code given on the command line"
        if re.fullmatch(r"-[A-Za-z]+", arg) and any(ch in letters for ch in arg[1:]):
            return f"`{arg}` makes `{name}` run code given on the command line"
        if arg == "-m" and letters == "c":
            return None  # ``python -m module``: what follows are the module's own arguments
    return None


def _find_risk(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg in _FIND_RISK:
            verb = "delete files" if arg == "-delete" else (
                "write a file" if arg.startswith("-f") else "run another program")
            return f"`{arg}` makes `find` {verb}"
    return None


def _xargs_like(name: str, args: list[str]) -> str | None:
    return f"`{name}` runs the program named in its arguments"


def _tar_risk(name: str, args: list[str]) -> str | None:
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg.startswith("--"):
            key = arg.split("=", 1)[0]
            if key in ("--directory", "--absolute-names", "--transform", "--xform"):
                return f"`{key}` makes `tar` write outside the directory shown"
            continue
        bundle = arg[1:] if arg.startswith("-") else (arg if index == 0 else "")
        for letter, why in _TAR_SHORT_RISK.items():
            if letter in bundle:
                return f"`-{letter}` {why}"
    return None


def _git_risk(name: str, args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option = args[i].split("=", 1)[0]
        if option in _GIT_GLOBAL_RISK:
            return f"`git {option}` {_GIT_GLOBAL_RISK[option]}"
        if option in ("-p", "--paginate"):
            return f"`git {option}` runs a pager program"
        i += 2 if option in _GIT_GLOBAL_WITH_VALUE and "=" not in args[i] else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    if sub in _GIT_RISKY_SUBCOMMANDS:
        return f"`git {sub}` {_GIT_RISKY_SUBCOMMANDS[sub]}"
    if sub not in _GIT_BUILTINS:
        return f"`git {sub}` is not a git command: it may be an alias that runs a program"
    short = _GIT_SHORT_RISK.get(sub, "")
    for arg in rest:
        if arg == "--":
            break
        bundle = re.match(r"-([A-Za-z]+)", arg) if not arg.startswith("--") else None
        if _GIT_RISKY_OPTIONS.fullmatch(arg) or (
            short and bundle is not None and any(ch in short for ch in bundle.group(1))
        ):
            return f"`{arg.split('=', 1)[0]}` makes `git {sub}` run a program or write a file"
    return None


def _sed_risk(name: str, args: list[str]) -> str | None:
    scripts: list[str] = []
    explicit = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            continue
        if arg.startswith(("--in-place", "-i")):
            return f"`{arg}` makes `sed` rewrite the files it reads"
        if arg.startswith(("--file", "-f")):
            return f"`{arg}` makes `sed` run a script the user did not see"
        if arg == "--expression" or arg.startswith("--expression="):
            if "=" in arg:
                scripts.append(arg.split("=", 1)[1])
            else:
                scripts.append(args[i] if i < len(args) else "")
                i += 1
            explicit = True
        elif re.fullmatch(r"-[A-Za-z].*", arg):
            cluster = re.match(r"-([A-Za-z]*)", arg)
            letters = cluster.group(1) if cluster else ""
            if "i" in letters or "f" in letters:
                return f"`{arg}` makes `sed` rewrite files or run a script the user did not see"
            if "e" in letters:
                after = arg[arg.index("e") + 1:]
                if after:
                    scripts.append(after)
                else:
                    scripts.append(args[i] if i < len(args) else "")
                    i += 1
                explicit = True
        elif not arg.startswith("-") and not explicit:
            scripts.append(arg)  # the script, when no -e gave one; later words are files
            explicit = True
    for script in scripts:
        why = sed_script_risk(script)
        if why is not None:
            return why
    return None


def sed_script_risk(script: str) -> str | None:
    """Why a sed script may run a command or write a file (``e``, ``w``, ``W``, ``s///e``,
    ``s///w``), or None. A script this reader cannot follow counts as a risk."""
    i, n = 0, len(script)

    def skip_regex(at: int, delim: str) -> int:
        while at < n and script[at] != delim:
            at += 2 if script[at] == "\\" else 1
        if at >= n:
            _unreadable()
        return at + 1

    try:
        while i < n:
            ch = script[i]
            if ch in " \t;\n{}!":
                i += 1
                continue
            if ch.isdigit() or ch in "$,~+":
                i += 1
                continue
            if ch == "/":
                i = skip_regex(i + 1, "/")
                continue
            if ch == "\\" and i + 1 < n:
                i = skip_regex(i + 2, script[i + 1])
                continue
            if ch in "eEwW":
                return f"the sed command `{ch}` in {script!r} runs a command or writes a file"
            if ch in {"s", "y"}:
                if i + 1 >= n:
                    _unreadable()
                delim = script[i + 1]
                i = skip_regex(i + 2, delim)
                i = skip_regex(i, delim)
                if ch == "s":
                    start = i
                    while i < n and script[i] not in ";\n}":
                        i += 1
                    flags = script[start:i]
                    if "e" in flags or "w" in flags or "W" in flags:
                        return f"the flags `{flags}` of a sed s command in {script!r} run or write"
                continue
            if ch in "aic":  # text to the end of the line
                while i < n and script[i] != "\n":
                    i += 1
                continue
            if ch in "rRbtT:":  # a file name or a label to the end of the command
                while i < n and script[i] not in ";\n":
                    i += 1
                continue
            if ch in "pPdDnNgGhHxlqQz=F":
                i += 1
                continue
            _unreadable()
    except ValueError:
        return f"segue cannot follow the sed script {script!r}"
    return None


def _unreadable() -> NoReturn:
    raise ValueError


def _sqlite_risk(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg in ("-cmd", "-init") or arg.startswith("."):
            return f"`{arg}` hands `{name}` commands that can run programs or write files"
    operands = [a for a in args if not a.startswith("-")]
    if len(operands) > 1 and any(o.lstrip().startswith(".") for o in operands[1:]):
        return f"`{name}` is given dot-commands that can run programs or write files"
    return None


def _curl_risk(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg in ("-O", "--remote-name", "--remote-name-all", "-J", "-K", "--config") or (
            re.fullmatch(r"-[A-Za-z]*[OK][A-Za-z]*", arg)
        ):
            return f"`{arg}` makes `{name}` write a file or read options the user did not see"
    return None


def _wget_risk(name: str, args: list[str]) -> str | None:
    for arg in args:
        key = arg.split("=", 1)[0]
        if key in ("-O", "-P", "-a", "--directory-prefix", "--append-output", "-e", "--execute") \
                or re.fullmatch(r"-[OPae].+", arg):
            return f"`{arg}` makes `wget` write elsewhere or run settings the user did not see"
    return None


def _dd_risk(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg.startswith("of="):
            return f"`{arg}` makes `dd` write to a path"
    return None


def _rsync_risk(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg == "-e" or (re.fullmatch(r"-[A-Za-z]*e.*", arg) and not arg.startswith("--")):
            return f"`{arg}` makes `rsync` run a remote shell program"
    return None


def _zip_risk(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg in ("-TT", "--unzip-command") or arg.startswith("--unzip-command="):
            return f"`{arg}` makes `zip` run a program"
    return None


_SPECIFIC: dict[str, Callable[[str, list[str]], str | None]] = {
    **dict.fromkeys(_INLINE_CODE, _interpreter_risk),
    "find": _find_risk,
    "gfind": _find_risk,
    "tar": _tar_risk,
    "gtar": _tar_risk,
    "bsdtar": _tar_risk,
    "git": _git_risk,
    "sed": _sed_risk,
    "gsed": _sed_risk,
    "sqlite3": _sqlite_risk,
    "curl": _curl_risk,
    "wget": _wget_risk,
    "dd": _dd_risk,
    "rsync": _rsync_risk,
    "zip": _zip_risk,
    "xargs": _xargs_like,
}
