"""What git ignores in a registry's skill folders. A file git ignores is no part of the commit: the build never
publishes it and ``validate`` never reads it, so the two agree on what a skill is (a skill folder's ignored
``.env`` or ``node_modules/`` stays on the machine that has it). A skill folder git ignores whole is no skill.

``validate`` reads the ignored paths of the whole registry with one ``git status``. The build takes git's other
lines from the status its key read (``porcelain_v2``) and the ignored paths of only the folders it reads
(``ignored_of``; ``publish.worktree``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
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
    complete: bool = True  # ``ignored`` holds every skill's (else no skill's: ``ignored_of`` reads them)


def git_top(folder: Path) -> Path | None:
    """The top folder of the git repository holding ``folder``; None outside one."""
    folder = folder.resolve()
    top_text = git_output(["rev-parse", "--show-toplevel"], folder if folder.is_dir() else folder.parent)
    return Path(os.fsdecode(top_text.strip())).resolve() if top_text else None


def git_view(top: Path | None, root: Path, found: Discovery,
             changes: Sequence[Change] | None = None) -> GitView | None:
    """What git says of ``found``'s skill folders (``root`` is the registry's folder); None outside git.

    ``changes``: what ``git status --porcelain=v2`` printed for the whole repository without ignored paths
    (``porcelain_v2``, paths from the top), read already; the view then knows the ignored paths of no skill
    (``ignored_of`` reads them where they are needed). Without it, one ``git status`` lists the ignored paths
    of every skill."""
    if top is None:
        return None
    top = top.resolve()
    base = path_below(root.resolve(), top)
    if base is None:
        return None
    specs = pathspecs(base, found.scope)
    within = _matcher(specs) if changes is not None else None
    complete = within is None
    listed = [(code, path) for code, path in changes or () if code != "!!" and within(path)] if within else \
        _status(top, specs)
    if listed is None:
        return None
    strip = f"{base}/" if base else ""
    changes = [(code, path[len(strip):]) for code, path in listed if path.startswith(strip)]
    skills = {s.path for s in found.skills}
    whole = {path.rstrip("/") for code, path in changes if code == "!!"}
    gone = {path for path in skills if _ignored_whole(path, whole)}
    if gone:
        found = replace(found, skills=tuple(s for s in found.skills if s.path not in gone))
        skills -= gone
    owned, loose = _by_skill(changes, skills)
    ignored = {skill: tuple(path.rstrip("/") for code, path in own if code == "!!") for skill, own in owned.items()}
    return GitView(found, base, owned, loose, {skill: paths for skill, paths in ignored.items() if paths}, complete)


def ignored_of(top: Path, view: GitView, paths: Sequence[str]) -> tuple[dict[str, tuple[str, ...]], set[str]] | None:
    """The ignored paths of the skills at ``paths`` (those with any), and which of them git ignores whole; one
    ``git status`` over just those folders (each a literal pathspec); None when git fails."""
    strip = f"{view.base}/" if view.base else ""
    specs = [f":(literal){strip}{path}/" if path != "." else f":(literal){view.base or '.'}" for path in paths]
    changes = _status(top.resolve(), specs)
    if changes is None:
        return None
    ignored = [(code, path[len(strip):]) for code, path in changes if code == "!!" and path.startswith(strip)]
    whole = {path.rstrip("/") for _, path in ignored}
    gone = {path for path in paths if _ignored_whole(path, whole)}
    owned, _ = _by_skill(ignored, set(paths))
    return {skill: tuple(path.rstrip("/") for _, path in own) for skill, own in owned.items()
            if own and skill not in gone}, gone


def _status(top: Path, specs: Sequence[str]) -> list[Change] | None:
    """``git status`` of ``specs`` with the ignored paths: each line's code and path from the top."""
    status = git_output(["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all",
                         "--ignored=matching", "--no-renames", "--", *specs], top)
    if status is None:
        return None
    return [(token[:2], token[3:]) for token in status.decode("utf-8", "surrogateescape").split("\0") if token]


def _matcher(specs: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a path from the top lies where the pathspecs ``specs`` (``pathspecs``) name, as git matches them;
    None for a pattern not read here (a bracket expression)."""
    plain = tuple(spec for spec in specs if not spec.startswith(":("))
    patterns = []
    for spec in specs:
        if spec.startswith(":("):
            glob = spec.removeprefix(":(glob)")
            if glob == spec or "[" in glob or not glob.endswith("/**"):
                return None
            # ``*`` and ``?`` stay within one part of the path; the trailing ``/**`` takes anything below.
            parts = (re.escape(part).replace(r"\*", "[^/]*").replace(r"\?", "[^/]") for part in glob[:-3].split("/"))
            patterns.append("/".join(parts) + "/.*")
    found = re.compile("|".join(patterns), re.DOTALL) if patterns else None
    every = "." in plain

    def within(path: str) -> bool:
        return every or path.startswith(plain) or path + "/" in plain or (
            found is not None and found.fullmatch(path) is not None)
    return within


def porcelain_v2(status: bytes) -> list[tuple[str, str, str]]:
    """Each path ``git status --porcelain=v2 -z --no-renames`` names: its code as the first format spells it
    (``??`` untracked, ``!!`` ignored, else the two letters, ``.`` as a space), the path and its whole line."""
    lines = []
    for token in status.decode("utf-8", "surrogateescape").split("\0"):
        if not token or token.startswith("#"):
            continue
        fields = {"1": 9, "2": 10, "u": 11}.get(token[0], 2)  # the path is the last field of its line
        code = {"?": "??", "!": "!!"}.get(token[0]) or token[2:4].replace(".", " ")
        lines.append((code, token.split(" ", fields - 1)[-1], token))
    return lines


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
