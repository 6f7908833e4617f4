"""What git says of the skill folders in the work tree: what it ignores in them (``core.git_ignored``: never
published, so a build of the same commit elsewhere gives the same bytes), and whether they changed.

In a git checkout a skill folder's signature comes from git rather than from stating every file in it: the id of
its tree at HEAD (which names every byte and mode committed) and the lines ``git status`` prints for it (staged,
modified and untracked paths), each changed path with its ``stat``; an ignored path is never published, so it is
no part of the signature. One ``ls-tree`` and one ``status`` for the whole registry (the build key's, when the
build has one); git compares the committed files against its index's cached stats in C. The ignored paths are
read only for the folders the build reads (``WorkTree.read_ignored``). Outside git, or before the first commit,
folders are surveyed file by file (``folder_changes``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.discovery import Discovery
from ..core.errors import BuildError
from ..core.git import git_output
from ..core.git_ignored import Change, GitView, git_view, ignored_of
from ..core.loader import display_path
from .folder_changes import stat_line, survey

GIT_SIGNATURE = "git:"  # how a signature from git starts (a surveyed one is plain hex)


# At most this many skill folders have their ignored paths read by a ``git status`` naming each; more are read
# by one status of the whole registry (what a whole build does).
NAMED_FOLDERS = 64


@dataclass(frozen=True)
class WorkTree:
    """git's view of the skill folders, keyed by each skill's path in the registry."""

    ignored: dict[str, tuple[str, ...]] = field(default_factory=dict)  # paths in the folder git ignores (of the
    # skills not ``pending``)
    signatures: Mapping[str, str] = field(default_factory=dict)  # a skill without one is surveyed (outside git,
    # before the first commit, a folder reached through a link)
    pending: set[str] = field(default_factory=set)  # skills whose ignored paths are not read yet: folders git
    # signs as committed and unchanged, read only when the build reads the folder (``read_ignored``)
    view: GitView | None = None  # where to read them from
    top: Path | None = None

    def read_ignored(self, paths: Iterable[str]) -> Mapping[str, tuple[str, ...]]:
        """``ignored``, once it holds the skills at ``paths``."""
        wanted = sorted({path for path in paths if path in self.pending})
        if not wanted or self.view is None or self.top is None:
            return self.ignored
        read = _ignored_in(self.top, self.view, wanted)
        if read is None:
            raise BuildError(f"{display_path(self.top)}: `git status` failed, so the files git ignores in the skill "
                             "folders are not known; run `git status` there to see why")
        self.ignored.update(read.ignored)
        if read.every:
            self.pending.clear()
        else:
            self.pending.difference_update(wanted)
        return self.ignored


def read_work_tree(top: Path | None, root: Path, found: Discovery,
                   changes: Sequence[Change] | None = None) -> tuple[Discovery, WorkTree]:
    """``found`` without the skill folders git ignores whole, and git's view of the others. ``changes``: the
    repository's ``git status`` read already (``current.BuildKey``); the ignored paths are then read only for
    the folders that differ from HEAD, and for the others when the build reads them."""
    view = git_view(top, root, found, changes)
    if view is None or top is None:
        return found, WorkTree()
    top = top.resolve()
    trees = _trees(top, view.base)
    if (trees is None or view.loose) and not view.complete:
        view = git_view(top, root, found)  # every folder is surveyed: the ignored paths of all
        if view is None:
            return found, WorkTree()
    if trees is None or view.loose:  # no commit yet, or a change git shows above a skill folder: survey them
        return view.found, WorkTree(dict(view.ignored))
    # A folder reached through a link is surveyed: git's tree at its path is not what the build reads.
    direct = _not_linked(view.found)
    signed = {path: trees[tree] for path in direct if (tree := _joined(view.base, path)) in trees}
    ignored, pending = dict(view.ignored), set()
    if not view.complete:
        # Read now for the folders that differ from HEAD (one may be ignored whole); the others are committed.
        differ = [s.path for s in view.found.skills if s.path not in signed or s.path in view.owned]
        read = _ignored_in(top, view, differ) if differ else _Ignored({}, set(), every=False)
        if read is None:
            return found, WorkTree()
        ignored = read.ignored
        if read.gone:
            view = replace(view, found=replace(view.found, skills=tuple(
                s for s in view.found.skills if s.path not in read.gone)))
        pending = set() if read.every else {s.path for s in view.found.skills if s.path not in differ}
    owned = view.owned
    signatures = {s.path: _signature(signed.get(s.path, "-"), s.folder, owned.get(s.path, ()))
                  for s in view.found.skills if s.path in direct}
    return view.found, WorkTree(ignored, signatures, pending, view, top)


def _not_linked(found: Discovery) -> set[str]:
    """The paths of the skills whose folder is where their path says (none reached through a link)."""
    where = os.fspath(found.root)
    prefix = where if where.endswith(os.sep) else where + os.sep  # as ``os.path.join`` joins them
    return {s.path for s in found.skills
            if os.fspath(s.folder) == (s.path if os.path.isabs(s.path) else prefix + s.path)}


@dataclass(frozen=True)
class _Ignored:
    """What git ignores in some skill folders."""

    ignored: dict[str, tuple[str, ...]]  # each skill's ignored paths (those with any)
    gone: set[str]  # the skills ignored whole
    every: bool  # read for every skill of the registry, not only those asked for


def _ignored_in(top: Path, view: GitView, paths: Sequence[str]) -> _Ignored | None:
    """The ignored paths of the skills at ``paths``: from a status naming each folder when they are few, else (or
    when git refuses to name one, as for a path it sees beyond a link) from one status of the whole registry."""
    named = ignored_of(top, view, paths) if len(paths) <= NAMED_FOLDERS else None
    if named is not None:
        return _Ignored(*named, every=False)
    whole = git_view(top, view.found.root, view.found)
    if whole is None:
        return None
    kept = {s.path for s in whole.found.skills}
    return _Ignored(dict(whole.ignored), {s.path for s in view.found.skills if s.path not in kept}, every=True)


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
            continue  # never published: only whether a file is ignored matters, and the loader is told
        if rel.endswith("/"):
            lines.append(f"{code} {rel} {survey(folder / rel)[0]}")
        else:
            try:
                lines.append(f"{code} {stat_line(rel, os.stat(folder / rel, follow_symlinks=False))}")
            except OSError:
                lines.append(f"{code} {rel} gone")
    text = "\n".join(lines)
    return GIT_SIGNATURE + hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()
