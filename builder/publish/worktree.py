"""What git says of the skill folders in the work tree: what it ignores in them (``core.git_ignored``: never
published, so a build of the same commit elsewhere gives the same bytes), and whether they changed.

In a git checkout a skill folder's signature comes from git rather than from stating every file in it: the id of
its tree at HEAD (which names every byte and mode committed) and the lines ``git status`` prints for it (staged,
modified, untracked and ignored paths), each changed path with its ``stat``. One ``ls-tree`` and one ``status``
for the whole registry; git compares the committed files against its index's cached stats in C. Outside git, or
before the first commit, folders are surveyed file by file (``folder_changes``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core.discovery import Discovery
from ..core.git import git_output
from ..core.git_ignored import git_view
from .folder_changes import stat_line, survey

GIT_SIGNATURE = "git:"  # how a signature from git starts (a surveyed one is plain hex)


@dataclass(frozen=True)
class WorkTree:
    """git's view of the skill folders, keyed by each skill's path in the registry."""

    ignored: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # paths in the folder git ignores
    signatures: Mapping[str, str] = field(default_factory=dict)  # a skill without one is surveyed (outside git,
    # before the first commit, a folder reached through a link)


def read_work_tree(top: Path | None, root: Path, found: Discovery) -> tuple[Discovery, WorkTree]:
    """``found`` without the skill folders git ignores whole, and git's view of the others."""
    view = git_view(top, root, found)
    if view is None or top is None:
        return found, WorkTree()
    trees = _trees(top.resolve(), view.base)
    if trees is None or view.loose:  # no commit yet, or a change git shows above a skill folder: survey them
        return view.found, WorkTree(view.ignored)
    where = os.fspath(view.found.root)
    signatures = {s.path: _signature(trees.get(_joined(view.base, s.path), "-"), s.folder, view.owned.get(s.path, ()))
                  for s in view.found.skills if os.fspath(s.folder) == os.path.join(where, s.path)}
    return view.found, WorkTree(view.ignored, signatures)


def _joined(base: str, path: str) -> str:
    if path == ".":
        return base
    return f"{base}/{path}" if base else path


def _trees(top: Path, base: str) -> dict[str, str] | None:
    """Every folder's tree id at HEAD below ``base`` (the registry's folder, "" for the top), by its path from the
    top (the top itself as ""); None before the first commit."""
    listed = git_output(["ls-tree", "-r", "-d", "-z", "HEAD", *(["--", base] if base else [])], top)
    if listed is None:
        return None
    head = git_output(["rev-parse", "HEAD^{tree}"], top)
    trees = {"": head.decode("ascii").strip()} if head else {}
    for token in listed.decode("utf-8", "surrogateescape").split("\0"):
        if token:
            meta, _, path = token.partition("\t")
            trees[path] = meta.rsplit(" ", 1)[-1]
    return trees


def _signature(tree: str, folder: Path, changes: Sequence[tuple[str, str]]) -> str:
    """The folder's tree at HEAD and what ``git status`` says changed in it: each changed file with its ``stat``,
    an untracked folder git does not look into (a nested repository) surveyed, an ignored path by its name."""
    lines = [tree]
    for code, rel in sorted(changes):
        if code == "!!":
            lines.append(f"{code} {rel}")
        elif rel.endswith("/"):
            lines.append(f"{code} {rel} {survey(folder / rel)[0]}")
        else:
            try:
                lines.append(f"{code} {stat_line(rel, os.stat(folder / rel, follow_symlinks=False))}")
            except OSError:
                lines.append(f"{code} {rel} gone")
    text = "\n".join(lines)
    return GIT_SIGNATURE + hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()
