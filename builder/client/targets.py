"""Where the client may write or delete a skill's folder: the one rule that install, restore, update, remove and
the MCP server all ask before they touch the disk.

A skill lands only in an agent's skill folder (``builder/data/agents.yaml``) or in a folder the user typed with
``--dir`` on this command line: a lock file is data from the checkout and never widens that. Even then it never
goes inside ``.git``, a virtual environment or a ``site-packages`` folder (places whose files git or Python run
on their own), and never where a file is.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..core.errors import ClientError
from .agents import agent_table
from .lock import Lock

# Folders whose contents something runs without asking: git (hooks, config) and Python (site-packages, .pth).
_NEVER = {".git": "inside .git", "site-packages": "inside a site-packages folder",
          "dist-packages": "inside a dist-packages folder"}


class Refused(ClientError):
    """A refusal whose way out may be a command-line flag; ``tool`` says the same to a caller that has no flags
    (an agent calling the MCP tool), so it is never sent to a flag it cannot pass."""

    def __init__(self, message: str, tool: str) -> None:
        super().__init__(message)
        self.tool = tool


class UnsafeTarget(Refused):
    """A skill folder the client must not write or delete; nothing was changed."""


@dataclass(frozen=True)
class Destinations:
    """The skills folders one command may write into: every agent's (project or user) and the ``--dir`` typed."""

    agents: frozenset[Path]
    typed: frozenset[Path]

    def allows(self, skills_folder: Path) -> bool:
        return skills_folder in self.agents or skills_folder in self.typed


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))


def destinations(lock: Lock, typed: Sequence[Path] = ()) -> Destinations:
    """The folders a command on ``lock`` may write skills into; ``typed`` are the --dir folders of this command."""
    agents = frozenset(_absolute(agent.folder(global_=lock.global_, project_root=lock.base))
                       for agent in agent_table().agents.values())
    return Destinations(agents, frozenset(_absolute(p) for p in typed))


def writable_folder(lock: Lock, target: str, name: str, allowed: Destinations, *, recorded: bool) -> Path:
    """The folder of ``target`` (as the lock records it), if skill ``name`` may be written or deleted there;
    raises ``UnsafeTarget`` naming the target otherwise. ``recorded``: the target was read from the lock file."""
    folder = lock.folder(target)  # its real path stays inside the project (or the home folder)
    absolute = _absolute(folder)
    where = f"{lock.path.name}: {name} -> {target}" if recorded else f"{name} -> {target}"
    root = _absolute(lock.base)
    problem = _never_here(absolute, root)
    if problem:
        raise UnsafeTarget(f"{where}: refusing to write there: it is {problem} (never, not even with --dir)",
                           f"{where}: refusing to write there: it is {problem}; nothing was changed")
    if not allowed.allows(absolute.parent):
        typed = PurePosixPath(target).parent.as_posix()
        outside = f"{where} is outside the agents' skill folders"
        if recorded:
            raise UnsafeTarget(f"{outside}; the lock alone cannot send a skill there (run the command again with "
                               f"--dir {typed} to allow it)",
                               f"{outside}; the lock alone cannot send a skill there, and this tool writes only into "
                               "the agents' skill folders; nothing was changed")
        raise UnsafeTarget(f"{outside} and the --dir given; refusing it", f"{outside}; refusing it")
    in_the_way = _file_in_the_way(absolute, root)
    if in_the_way is not None:
        shown = in_the_way.relative_to(root).as_posix() if in_the_way.is_relative_to(root) else str(in_the_way)
        message = f"{where}: {shown} is a file, not a folder; refusing to replace it"
        raise UnsafeTarget(message, message)
    return folder


def _never_here(folder: Path, root: Path) -> str | None:
    """Why ``folder`` is a place nothing is installed, judged on its path as written and on its real path."""
    real_root = root.resolve()
    for path, base in ((folder, root), (folder.resolve(), real_root)):
        if not path.is_relative_to(base):
            continue
        parts = path.relative_to(base).parts
        for part in parts:
            if part.casefold() in _NEVER:
                return _NEVER[part.casefold()]
        current = path
        while True:
            if (current / "pyvenv.cfg").exists():
                shown = current.relative_to(base).as_posix() if current != base else "the project"
                return f"inside a virtual environment ({shown} holds pyvenv.cfg)"
            if current == base or current.parent == current:
                break
            current = current.parent
    return None


def _file_in_the_way(folder: Path, root: Path) -> Path | None:
    """The first path from ``root`` down to ``folder`` that exists and is not a folder (links followed)."""
    current = root
    for part in folder.relative_to(root).parts if folder.is_relative_to(root) else ():
        current = current / part
        try:
            st = os.stat(current)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return current.parent
        except OSError:
            return None  # the write reports it
        if not stat.S_ISDIR(st.st_mode):
            return current
    return None
