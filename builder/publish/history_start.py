"""Where a registry's published history starts: registry.yaml's ``history.start``, a commit on the built branch.

A fork, or a registry made in a repository that held other skills, does not publish what the skills were before
its own start: a skill's versions begin with its state at that commit, and a skill deleted before it is not
published at all (not as a skill gone from the work tree, nor as withdrawn versions).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..core.config import CONFIG_NAME, HistoryPolicy, RegistryConfig
from ..core.discovery import SKILL_FILES
from ..core.errors import BuildError
from ..core.git import git_output
from .history_walk import GitHistory, _SkillWalk


def resolve_start(top: Path, policy: HistoryPolicy, config_path: Path | None) -> tuple[str, frozenset[str]]:
    """(the full id of the start commit, the ids of the first-parent commits before it); a start that is not a
    commit of the built branch stops the build with registry.yaml's line."""
    assert policy.start is not None
    where = f"{config_path or CONFIG_NAME}:{policy.start_line}: history.start"
    found = git_output(["rev-parse", "--verify", "-q", f"{policy.start}^{{commit}}"], top)
    if not found:
        raise BuildError(f"{where}: {policy.start} is not a commit of this repository (in a shallow clone, fetch "
                         "the whole history: git fetch --unshallow, or actions/checkout with fetch-depth: 0)")
    commit = found.decode("ascii").strip()
    chain = git_output(["rev-list", "--first-parent", "HEAD"], top) or b""
    ids = chain.decode("ascii").split()
    if commit not in ids:
        raise BuildError(f"{where}: {policy.start} is not on the built branch's first-parent history (HEAD and "
                         "the commits it was merged onto)")
    return commit, frozenset(ids[ids.index(commit) + 1:])


def skill_folders_at(top: Path, commit: str, base: str) -> frozenset[str]:
    """The folders (relative to the registry's folder ``base``) holding a SKILL.md at ``commit``."""
    listed = git_output(["ls-tree", "-r", "-z", "--name-only", commit, "--", base or "."], top) or b""
    folders = set()
    prefix = f"{base}/" if base else ""
    for raw in listed.split(b"\0"):
        path = os.fsdecode(raw)
        folder, _, name = path.rpartition("/")
        if name in SKILL_FILES and (folder + "/").startswith(prefix):
            folders.add(folder[len(prefix):] or ".")
    return frozenset(folders)


def start_history(git: GitHistory, config: RegistryConfig) -> GitHistory:
    """``git`` less what precedes registry.yaml's ``history.start``, which it records (``start``)."""
    if config.history.start is None or git.top is None or git.head is None:
        return git
    commit, before = resolve_start(git.top, config.history, config.path)
    root = config.root.resolve()
    base = root.relative_to(git.top).as_posix() if root != git.top else ""
    present = skill_folders_at(git.top, commit, base)
    lines: dict[str, bytes] = {}
    for path, line in git.lines.items():
        walk = _SkillWalk.decode(line)
        earlier = [s for s in walk.snapshots if s.commit in before]
        kept = [s for s in walk.snapshots if s.commit not in before]
        at_start = bool(kept) and kept[0].commit == commit
        if earlier and not at_start and (path in present or git.moved.get(path) in present):
            kept.insert(0, earlier[-1])  # its state at the start, from before: its first published version
        if kept:
            walk.snapshots = kept
            lines[path] = walk.encode("" if path == "." else path)
    return replace(git, lines=lines, moved={new: old for new, old in git.moved.items() if new in lines},
                   start=commit)
