"""Who made each skill and when, from one ``git log`` pass over the whole skills folder.

Times are commit times, never the clock, so a build of one commit is reproducible. Outside a git
repository every field is empty rather than invented.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


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
    skills_prefix: str = ""  # the skills folder relative to ``top``, e.g. "skills"


@dataclass(frozen=True)
class History:
    source: Source = field(default_factory=Source)
    skills: dict[str, Provenance] = field(default_factory=dict)

    def of(self, name: str) -> Provenance:
        return self.skills.get(name, Provenance())


def iso_time(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


def read_history(skills_path: Path) -> History:
    """One ``git log`` for every skill folder below ``skills_path``; empty outside a repository."""
    skills_path = skills_path.resolve()
    cwd = skills_path if skills_path.is_dir() else skills_path.parent
    top_text = _git(["rev-parse", "--show-toplevel"], cwd)
    if not top_text:
        return History()
    top = Path(top_text.strip()).resolve()
    head = _git(["log", "-1", "--format=%H%x1f%ct"], cwd)
    if not head:  # a repository with no commits yet
        return History(Source(top=top))
    commit, ctime = head.strip().split("\x1f")
    prefix = skills_path.relative_to(top).as_posix() if skills_path != top else ""
    source = Source(commit=commit, time=iso_time(int(ctime)), top=top, skills_prefix=prefix)
    log = _git(["-c", "core.quotepath=off", "log", "-z", "--name-only", "--no-renames",
                "--format=%x1e%H%x1f%ct%x1f%an", "--", prefix or "."], top)
    skills: dict[str, dict[str, Any]] = {}
    depth = len(prefix.split("/")) if prefix else 0
    for record in (log or "").split("\x1e"):
        if not record:
            continue
        header, _, names = record.partition("\0")
        sha, ctime, author = header.split("\x1f")
        when = iso_time(int(ctime))
        touched = {p.split("/")[depth] for p in names.lstrip("\n").split("\0") if p.count("/") > depth}
        for name in touched:
            entry = skills.get(name)
            if entry is None:  # newest commit first: the first one seen is the last update
                skills[name] = entry = {"updated": when, "commit": sha, "authors": []}
            entry["created"] = when
            if author not in entry["authors"]:
                entry["authors"].append(author)
    return History(source, {
        name: Provenance(created=e["created"], updated=e["updated"], authors=tuple(sorted(e["authors"])),
                         commit=e["commit"])
        for name, e in skills.items()
    })
