"""What git says of the skill folders in the work tree: what it ignores in them, and whether they changed.

A file git ignores is no part of the commit, so it is never published: a skill folder's ignored ``.env`` or
``node_modules/`` stays on the machine that has it, and a build of the same commit elsewhere gives the same bytes.

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
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.discovery import Discovery, pathspecs
from ..core.git import git_output
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
    if top is None:
        return found, WorkTree()
    top = top.resolve()
    base = _below(root.resolve(), top)
    if base is None:
        return found, WorkTree()
    status = git_output(["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all",
                         "--ignored=matching", "--no-renames", "--", *pathspecs(base, found.scope)], top)
    if status is None:
        return found, WorkTree()
    strip = f"{base}/" if base else ""
    lines = [(token[:2], token[3:]) for token in status.decode("utf-8", "surrogateescape").split("\0") if token]
    changes = [(code, path[len(strip):]) for code, path in lines if path.startswith(strip)]
    skills = {s.path for s in found.skills}
    whole = {path.rstrip("/") for code, path in changes if code == "!!"}
    gone = {path for path in skills if _ignored_whole(path, whole)}
    if gone:
        found = replace(found, skills=tuple(s for s in found.skills if s.path not in gone))
        skills -= gone
    owned, loose = _by_skill(changes, skills)
    ignored = {skill: tuple(path.rstrip("/") for code, path in own if code == "!!") for skill, own in owned.items()}
    ignored = {skill: paths for skill, paths in ignored.items() if paths}
    trees = _trees(top, base)
    if trees is None or loose:  # no commit yet, or a change git shows above a skill folder: survey them
        return found, WorkTree(ignored)
    where = os.fspath(found.root)
    signatures = {s.path: _signature(trees.get(_joined(base, s.path), "-"), s.folder, owned.get(s.path, ()))
                  for s in found.skills if os.fspath(s.folder) == os.path.join(where, s.path)}
    return found, WorkTree(ignored, signatures)


def _below(root: Path, top: Path) -> str | None:
    """``root`` relative to ``top`` as git spells it ("" for the top itself); None when outside it."""
    try:
        rel = root.relative_to(top).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


def _joined(base: str, path: str) -> str:
    if path == ".":
        return base
    return f"{base}/{path}" if base else path


def _ignored_whole(path: str, ignored: set[str]) -> bool:
    """Whether the skill folder at ``path`` is ignored itself or lies in an ignored folder."""
    while path not in ("", "."):
        if path in ignored:
            return True
        path = path.rpartition("/")[0]
    return False


def _by_skill(changes: Sequence[tuple[str, str]], skills: set[str]) -> \
        tuple[dict[str, list[tuple[str, str]]], bool]:
    """Each change given to the innermost skill folder holding it, its path relative to that folder; and whether
    a change that is not ignored lies outside every skill folder but holds one (an untracked folder git does not
    look into)."""
    owned: dict[str, list[tuple[str, str]]] = {}
    loose = False
    for code, path in changes:
        parent = path.rstrip("/")
        if parent in skills:  # the folder itself: untracked and not looked into (a nested repository)
            owned.setdefault(parent, []).append((code, "./"))
            continue
        while "/" in parent:
            parent = parent.rpartition("/")[0]
            if parent in skills:
                owned.setdefault(parent, []).append((code, path[len(parent) + 1:]))
                break
        else:
            if "." in skills:
                owned.setdefault(".", []).append((code, path))
            elif code != "!!" and path.endswith("/") and any(s.startswith(path) for s in skills):
                loose = True
    return owned, loose


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
