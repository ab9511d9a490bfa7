"""Which workspace a library call means: the id (or Layout), the home and the working
directory, with the command line's defaults. Pure path arithmetic, nothing is touched."""

from __future__ import annotations

import os
from pathlib import Path

from segue._errors import UsageError
from segue._workspace import Layout, default_home, default_workspace_id, validate_workspace_id


def resolve_layout(
    workspace: str | Layout | None,
    *,
    home: str | os.PathLike[str] | None,
    workdir: str | os.PathLike[str] | None,
) -> tuple[Layout, Path]:
    """The workspace's Layout and the working directory (``workdir``, else the current one).

    ``workspace`` may be an id, a Layout (which names its home: giving ``home`` as well is an
    error unless it is the same directory), or None for the id the command line would use
    there: the working directory's git repository root, else the directory itself.
    ``home`` defaults to ``$SEGUE_HOME``, else ``~/.segue``. A leading ``~`` is
    the user's home directory in both."""
    where = Path(workdir).expanduser() if workdir is not None else Path.cwd()
    if isinstance(workspace, Layout):
        if home is not None and Path(home).expanduser() != workspace.home:
            raise UsageError(
                f"the Layout names home {workspace.home}, and home= names {home}: give one"
            )
        return workspace, where
    if workspace is not None and not isinstance(workspace, str):
        raise UsageError(
            f"workspace must be an id (str) or a segue.Layout, not {type(workspace).__name__}"
        )
    wid = validate_workspace_id(workspace) if workspace is not None else default_workspace_id(where)
    return Layout(Path(home).expanduser() if home is not None else default_home(), wid), where
