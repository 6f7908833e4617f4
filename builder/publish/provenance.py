"""Who made each skill and when, from one ``git log`` pass over the places skills live.

Each commit counts for the skill folders its paths lie in (a skill moved with ``git mv`` counts its old folder's
commits too), keyed by the folder's path in the repository as discovery names it.

Times are commit times, never the clock, so a build of one commit is reproducible. Outside a git
repository every field is empty rather than invented.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.discovery import pathspecs
from ..core.fs import write_atomic
from ..core.git import git_output, git_text, log_format, read_log, run_git


@dataclass(frozen=True)
class Provenance:
    created: str | None = None
    updated: str | None = None
    authors: tuple[str, ...] = ()
    commit: str | None = None  # the last commit that touched the skill


@dataclass(frozen=True)
class Source:
    """The commit a build is made from."""

    commit: str | None = None
    time: str | None = None
    top: Path | None = None  # the repository's top folder
    skills_prefix: str = ""  # where skills live, as the pathspecs below ``top`` the history was read from


@dataclass(frozen=True)
class ProvenanceHistory:
    """Every skill's provenance from one walk of the git log, and the commit it was read at."""

    source: Source = field(default_factory=Source)
    skills: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # each skill's entry as the walk keeps
    # it: made a ``Provenance`` only for the skills a build reads it of (a rebuild, a few of 60,000)

    def of(self, name: str) -> Provenance:
        entry = self.skills.get(name)
        if entry is None:
            return Provenance()
        return Provenance(created=entry["created"], updated=entry["updated"], authors=tuple(sorted(entry["authors"])),
                          commit=entry["commit"])

    def key(self) -> str:
        """Names the history read: ``read_history`` gives the same provenance to every skill for the same commit of
        the same repository and skills folder (outside one, or before its first commit, none at all)."""
        source = self.source
        text = json.dumps([source.commit, source.time, str(source.top), source.skills_prefix, len(self.skills)])
        return hashlib.sha256(text.encode()).hexdigest()


_FIRST, _LAST = datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def iso_time(epoch: int) -> str:
    """A commit time as ISO 8601 UTC; a time git accepts but a calendar cannot show is clamped to years 1-9999."""
    try:
        when = datetime.fromtimestamp(epoch, tz=UTC)
    except (OverflowError, OSError, ValueError):
        when = _FIRST if epoch < 0 else _LAST
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


PROVENANCE_FORMAT = 1


def _log(top: Path, specs: list[str], revs: list[str]) -> bytes:
    log = git_output(["log", "--full-history", "-z", "--name-only", "--no-renames", log_format("%an"), *revs,
                      "--", *specs], top)
    return log or b""


class _Owners:
    """Which skill a repository path belongs to: the outermost skill folder holding it (a moved skill's old
    folder stands for it), for every path below ``base``."""

    def __init__(self, base: str, folders: Mapping[str, str]) -> None:
        self.base = f"{base}/" if base else ""
        self.folders = folders  # folder (relative to base) -> the skill path it counts for
        self.whole = folders.get("")

    def __call__(self, path: str) -> str | None:
        if self.base:
            if not path.startswith(self.base):
                return None
            path = path[len(self.base):]
        if self.whole is not None:
            return self.whole
        folder = ""
        for part in path.split("/")[:-1]:
            folder = f"{folder}/{part}" if folder else part
            owner = self.folders.get(folder)
            if owner is not None:
                return owner
        return None


def _fold_new(log: bytes, owner: Callable[[str], str | None], skills: dict[str, dict[str, Any]],
              where: Path) -> None:
    """Lay ``git log`` output (newest commit first) over ``skills``: a skill's newest commit here is its last
    update; its oldest is its creation, unless ``skills`` knew it already; every author is a contributor."""
    known = set(skills)
    seen: set[str] = set()
    for record in read_log(log, 1, where):
        sha, author = record.commit, record.fields[0].decode("utf-8", "surrogateescape")
        when = iso_time(record.time)
        touched = {name for p in record.body if (name := owner(p.decode("utf-8", "surrogateescape"))) is not None}
        for name in touched:
            entry = skills.get(name)
            if entry is None:
                entry = skills[name] = {"updated": when, "commit": sha, "authors": [], "created": when}
            elif name not in seen and name in known:
                entry["updated"], entry["commit"] = when, sha
            seen.add(name)
            if name not in known:
                entry["created"] = when
            if author not in entry["authors"]:
                entry["authors"].append(author)


def _incremental_safe(top: Path, old: str, saved: dict[str, Any]) -> bool:
    """Whether the commits after ``old`` can simply be laid over the saved result: ``old`` is an ancestor, and
    every new commit is strictly newer than its parents and than every saved update, at distinct times. Then
    ``git log`` (newest first by commit time) lists all new commits before any old one that touched a skill, in
    the same order as a full read, so the merged result equals what reading the whole history gives."""
    try:
        ancestor = run_git(["merge-base", "--is-ancestor", old, "HEAD"], top).returncode == 0
    except OSError:
        return False
    if not ancestor:
        return False
    lines = (git_text(["log", "--full-history", "--format=%H %ct %P", f"{old}..HEAD"], top) or "").split("\n")
    commits = {parts[0]: (int(parts[1]), parts[2:]) for parts in (line.split() for line in lines) if parts}
    if not commits:
        return False
    outside = sorted({p for _, parents in commits.values() for p in parents if p not in commits})
    times = (git_text(["show", "-s", "--format=%H %ct", *outside], top) or "").split() if outside else []
    parent_time = {**{times[i]: int(times[i + 1]) for i in range(0, len(times) - 1, 2)},
                   **{sha: t for sha, (t, _) in commits.items()}}
    newest_saved = max((e["updated"] for e in saved.values()), default="")
    new_times = [t for t, _ in commits.values()]
    return (len(set(new_times)) == len(new_times)
            and all(p in parent_time and t > parent_time[p] for t, parents in commits.values() for p in parents)
            and iso_time(min(new_times)) > newest_saved)


def read_history(root: Path, skills: Sequence[str] = (), state: Path | None = None, *,
                 scope: Sequence[str] = (), moved: Mapping[str, str] | None = None) -> ProvenanceHistory:
    """One ``git log`` below ``scope`` (where skills live, relative to ``root``, the registry's folder) for the skill
    folders ``skills`` (their paths relative to ``root``; every folder directly in ``root`` when none are given);
    empty outside a repository. ``moved``: a moved skill's path -> its path before, whose commits count too.

    With ``state`` (a file in the builder's own state folder) the result is kept, and a rebuild reads only the
    commits made since, when laying them over the kept result is sure to give the same answer as a full read.
    """
    root = root.resolve()
    cwd = root if root.is_dir() else root.parent
    top_text = git_text(["rev-parse", "--show-toplevel"], cwd)
    if not top_text:
        return ProvenanceHistory()
    top = Path(top_text.strip()).resolve()
    head = git_output(["log", "-1", "-z", log_format()], cwd)
    if not head:  # a repository with no commits yet
        return ProvenanceHistory(Source(top=top))
    last = next(read_log(head, 0, top))
    commit, ctime = last.commit, last.time
    base = root.relative_to(top).as_posix() if root != top else ""
    specs = pathspecs(base, scope)
    source = Source(commit=commit, time=iso_time(ctime), top=top, skills_prefix=" ".join(specs))
    folders = {("" if path == "." else path): path for path in skills}
    folders.update({("" if old == "." else old): new for new, old in (moved or {}).items() if old not in folders})
    owner: Callable[[str], str | None] = _Owners(base, folders) if skills else _Direct(base)
    ident = {"format": PROVENANCE_FORMAT, "top": str(top), "scope": specs, "base": base,
             "owners": hashlib.sha1("\n".join(f"{k}\0{v}" for k, v in sorted(folders.items())).encode(
                 "utf-8", "surrogateescape")).hexdigest()}
    found: dict[str, dict[str, Any]] | None = None
    unchanged = False
    if state is not None:
        try:
            saved = json.loads(state.read_bytes())
            if {k: saved.get(k) for k in ident} == ident and isinstance(saved.get("skills"), dict):
                if saved["head"] == commit:
                    found, unchanged = saved["skills"], True
                elif _incremental_safe(top, saved["head"], saved["skills"]):
                    found = saved["skills"]
                    _fold_new(_log(top, specs, [f"{saved['head']}..HEAD"]), owner, found, top)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            found = None
    if found is None:
        found = {}
        _fold_new(_log(top, specs, ["HEAD"]), owner, found, top)
    if state is not None and not unchanged:
        with suppress(OSError):
            write_atomic(state, json.dumps({**ident, "head": commit, "skills": found}, sort_keys=True).encode())
    return ProvenanceHistory(source, found)


class _Direct:
    """Without a list of skills: every folder directly in the registry's folder (``skills/`` read alone)."""

    def __init__(self, base: str) -> None:
        self.base = f"{base}/" if base else ""

    def __call__(self, path: str) -> str | None:
        if self.base:
            if not path.startswith(self.base):
                return None
            path = path[len(self.base):]
        name, sep, _ = path.partition("/")
        return name if sep else None
