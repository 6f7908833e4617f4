"""What git ignores in a registry's skill folders. A file git ignores is no part of the commit: the build never
publishes it and ``validate`` never reads it, so the two agree on what a skill is (a skill folder's ignored
``.env`` or ``node_modules/`` stays on the machine that has it). A skill folder git ignores whole is no skill.

One ``git status`` with the ignored paths for the whole registry; the build reads the same lines for its change
detection (``publish.worktree``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .discovery import Discovery, pathspecs
from .git import git_output, path_below

Change = tuple[str, str]  # git status's two-letter code and a path, relative to the registry's folder


@dataclass(frozen=True)
class GitView:
    """``git status`` over a registry's skill folders."""

    found: Discovery  # the skills, without the folders git ignores whole
    base: str  # the registry's folder relative to the repository's top ("" for the top itself)
    owned: Mapping[str, list[Change]] = field(default_factory=dict)  # each skill's changes, relative to its folder
    loose: bool = False  # a change outside every skill folder holds one (an untracked folder git does not look into)
    ignored: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # each skill's ignored paths


def git_top(folder: Path) -> Path | None:
    """The top folder of the git repository holding ``folder``; None outside one."""
    folder = folder.resolve()
    top_text = git_output(["rev-parse", "--show-toplevel"], folder if folder.is_dir() else folder.parent)
    return Path(os.fsdecode(top_text.strip())).resolve() if top_text else None


def git_view(top: Path | None, root: Path, found: Discovery) -> GitView | None:
    """What git says of ``found``'s skill folders (``root`` is the registry's folder); None outside git."""
    if top is None:
        return None
    top = top.resolve()
    base = path_below(root.resolve(), top)
    if base is None:
        return None
    status = git_output(["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all",
                         "--ignored=matching", "--no-renames", "--", *pathspecs(base, found.scope)], top)
    if status is None:
        return None
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
    return GitView(found, base, owned, loose, {skill: paths for skill, paths in ignored.items() if paths})


def without_ignored(root: Path, found: Discovery) -> tuple[Discovery, Mapping[str, tuple[str, ...]]]:
    """``found`` without the skill folders git ignores whole, and each skill's ignored paths (none outside git, or
    for skills named outside ``root``, whose paths are absolute)."""
    if all(os.path.isabs(s.path) for s in found.skills):
        return found, {}
    view = git_view(git_top(root), root, found)
    return (found, {}) if view is None else (view.found, view.ignored)


def _ignored_whole(path: str, ignored: set[str]) -> bool:
    """Whether the skill folder at ``path`` is ignored itself or lies in an ignored folder."""
    while path not in ("", "."):
        if path in ignored:
            return True
        path = path.rpartition("/")[0]
    return False


def _by_skill(changes: Sequence[Change], skills: set[str]) -> tuple[dict[str, list[Change]], bool]:
    """Each change given to the innermost skill folder holding it, its path relative to that folder; and whether
    a change that is not ignored lies outside every skill folder but holds one (an untracked folder git does not
    look into)."""
    owned: dict[str, list[Change]] = {}
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
