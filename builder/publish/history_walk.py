"""Each skill folder's states on the built branch, read from git history in one pass and kept between builds.

``read_git_history`` walks the branch's first-parent chain once (``git log --first-parent --raw``) below the places
skills live, so the commits inside a merged pull request are not versions, only what the merge put on the branch.
At each commit a skill folder is what discovery calls one: a folder holding SKILL.md (or ``skill.md``), not a dot
folder, not below a ``_`` folder or a skipped one, and not inside another skill's folder (then it is a file of
that skill). Each skill folder's file list (path, mode, blob id) is followed from commit to commit and every
distinct state is kept with the first commit that had it. A state's digest names the version.

A folder moved in one commit with its files unchanged (``git mv``) keeps the history of the folder it came from:
the same skill, at a new path. A folder moved and changed in one commit is a new skill; the old one is gone.

Skills are keyed by their folder's path relative to the registry's folder (``skills/pdf``, ``plugins/docs/skills/
pdf``), as discovery names them. Nothing here depends on the clock: times are committer times.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from ..core.discovery import SKILL_FILES, is_skill_folder, pathspecs
from ..core.errors import BuildError
from ..core.fs import write_atomic
from ..core.git import git_output, log_format, read_log
from ..core.git_ignored import git_top
from .git_objects import Entry
from .provenance import iso_time

_EMPTY_OID = "0" * 40
WALK_FORMAT = 2


@dataclass(frozen=True)
class Snapshot:
    """A state of one skill folder on the first-parent chain, at the first commit of a run that had it."""

    commit: str
    time: str
    position: int  # index of the commit on the chain, oldest first
    entries: tuple[Entry, ...]  # sorted by path

    @cached_property
    def key(self) -> str:
        """The state's identity: its file list with modes and blob ids (the blob id names the bytes)."""
        text = "\n".join(f"{p}\0{m}\0{o}" for p, m, o in self.entries)
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class _SkillWalk:
    """One skill folder's part of the walk: its files at the last commit read, and its snapshots so far."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    snapshots: list[Snapshot] = field(default_factory=list)
    last_key: str | None = None

    def fingerprint(self) -> str:
        text = "\n".join(f"{s.key}\0{s.commit}\0{s.time}\0{s.position}" for s in self.snapshots)
        return hashlib.sha1(text.encode()).hexdigest()

    def encode(self, path: str) -> bytes:
        """``<fingerprint> <quoted path> <live> <json>``: the first three are read without parsing the JSON."""
        data = {"files": {p: list(e) for p, e in sorted(self.files.items())}, "last": self.last_key,
                "snaps": [[s.commit, s.time, s.position, s.key, [list(e) for e in s.entries]] for s in self.snapshots]}
        live = "1" if self.last_key is not None else "0"
        head = f"{self.fingerprint()} {_quoted(path)} {live} "
        return head.encode() + json.dumps(data, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, line: bytes) -> _SkillWalk:
        data = json.loads(line.split(b" ", 3)[3])
        snaps = []
        for commit, time, position, key, entries in data["snaps"]:
            snap = Snapshot(commit, time, int(position), tuple((e[0], e[1], e[2]) for e in entries))
            snap.__dict__["key"] = key  # the cached_property's value, as computed when it was saved
            snaps.append(snap)
        return cls({p: (e[0], e[1]) for p, e in data["files"].items()}, snaps, data["last"])


def _quoted(path: str) -> str:
    """A path as one space-free word of a saved line."""
    return quote(path, safe="/", errors="surrogateescape")


def _live(line: bytes) -> bytes:
    """The ``live`` word of a saved line, found without copying the JSON after it."""
    second = line.index(b" ", line.index(b" ") + 1)
    return line[second + 1:second + 2]


def _line_path(line: bytes) -> str:
    return unquote(line.split(b" ", 2)[1].decode("ascii"), errors="surrogateescape")


@dataclass(frozen=True)
class GitHistory:
    """Each skill folder's snapshots on the built branch, oldest first; ``kind`` says how complete it is.

    A skill's part is kept encoded (``_SkillWalk.encode``) and decoded only for the skills a build rebuilds, so a
    rebuild after one commit costs the same however long the history is.
    """

    kind: str = "none"  # "complete", "shallow", or "none" outside git
    top: Path | None = None
    head: str | None = None
    lines: Mapping[str, bytes] = field(default_factory=dict)  # skill path (relative to the registry) -> its walk
    moved: Mapping[str, str] = field(default_factory=dict)  # a moved skill's path -> the path it had before
    start: str | None = None  # the commit registry.yaml's history.start names, once applied (history_start)

    @property
    def names(self) -> tuple[str, ...]:
        """Every skill folder's path the history knows, sorted."""
        return tuple(sorted(self.lines))

    def gone(self) -> tuple[str, ...]:
        """The skill folders the history knows that HEAD no longer holds."""
        return tuple(sorted(path for path, line in self.lines.items() if _live(line) == b"0"))

    def of(self, path: str) -> tuple[Snapshot, ...]:
        line = self.lines.get(path)
        return tuple(_SkillWalk.decode(line).snapshots) if line is not None else ()

    def fingerprints(self) -> Callable[[str], str]:
        """``fingerprint``; outside a repository (no skill has a history) the one value every name has."""
        if self.lines:
            return self.fingerprint
        none = self.fingerprint("")
        return lambda name: none

    def fingerprint(self, path: str) -> str:
        """Changes whenever the skill's history does: a rebuild reuses its versions only when this is equal."""
        line = self.lines.get(path)
        own = line.split(b" ", 1)[0].decode("ascii") if line is not None else ""
        text = f"{self.kind}\n{own}" if self.start is None else f"{self.kind}\n{self.start}\n{own}"
        return hashlib.sha1(text.encode()).hexdigest()


@dataclass
class _Walk:
    """The state of a walk down the first-parent chain, kept between builds so a rebuild reads only new commits:
    the skills the new commits touch are decoded, the others stay as the lines they were saved as.

    ``marks`` are the folders holding a SKILL.md (counted: SKILL.md and skill.md), ``below`` how many marks each
    folder has under it, ``loose`` the files in scope that belong to no skill (a README beside the skills).
    """

    base: str  # the registry's folder relative to the repository's top ("" when the same)
    lines: dict[str, bytes] = field(default_factory=dict)
    open: dict[str, _SkillWalk] = field(default_factory=dict)
    position: int = 0
    marks: dict[str, int] = field(default_factory=dict)
    below: dict[str, int] = field(default_factory=dict)
    loose: dict[str, tuple[str, str]] = field(default_factory=dict)
    loose_below: dict[str, int] = field(default_factory=dict)  # loose files under each folder
    moved: dict[str, str] = field(default_factory=dict)
    root_skill: bool = False  # a SKILL.md at the top makes the registry's folder one skill

    def skill(self, folder: str) -> _SkillWalk:
        walk = self.open.get(folder)
        if walk is None:
            line = self.lines.pop(folder, None)
            walk = self.open[folder] = _SkillWalk.decode(line) if line is not None else _SkillWalk()
        return walk

    def finish(self) -> dict[str, bytes]:
        """Every skill with a snapshot, encoded, by its path relative to the registry's folder."""
        for folder, walk in self.open.items():
            if walk.snapshots:
                self.lines[folder] = walk.encode(folder)
        self.open.clear()
        return self.lines

    # ---- which folder owns a path

    def owner(self, path: str) -> str | None:
        """The outermost skill folder holding ``path`` (a file's path), or None."""
        if self.root_skill and "" in self.marks:
            return ""
        parts = path.split("/")
        folder = ""
        for part in parts[:-1]:
            folder = f"{folder}/{part}" if folder else part
            if folder in self.marks:
                return folder
        return None

    def _outermost(self, folder: str) -> bool:
        return folder in self.marks and self.owner(folder + "/x") == folder

    def _mark(self, folder: str, step: int) -> bool:
        """Count a SKILL.md in or out of ``folder``; whether the folder became or stopped being marked."""
        if folder == "" and not self.root_skill:
            return False
        if folder and not is_skill_folder(folder):
            return False
        count = self.marks.get(folder, 0) + step
        changed = (count > 0) != (folder in self.marks)
        if count > 0:
            self.marks[folder] = count
        else:
            self.marks.pop(folder, None)
        if changed:
            parent = folder
            while parent:
                parent = parent.rpartition("/")[0]
                self.below[parent] = self.below.get(parent, 0) + (1 if count > 0 else -1)
        return changed

    # ---- moving files between skills when marks come and go

    def _regroup(self, folder: str, touched: set[str]) -> None:
        """After the mark of ``folder`` came or went: give every file below the outermost skill around it (or
        below it) to its owner now. Only the skills there are read: a new skill folder costs its own files."""
        outer = self.owner(folder + "/x")
        scope = outer if outer is not None and outer != folder else folder
        prefix = f"{scope}/" if scope else ""
        holders = [scope]
        if self.below.get(scope, 0):
            holders += [m for m in self.marks if m != scope and m.startswith(prefix)]
        files: dict[str, tuple[str, str]] = {}
        for holder in holders:
            if holder in self.open or holder in self.lines:
                walk = self.skill(holder)
                start = f"{holder}/" if holder else ""
                files.update((start + rel, entry) for rel, entry in walk.files.items())
                if walk.files:
                    walk.files = {}
                    touched.add(holder)
        if self.loose_below.get(scope, 0):
            for path in [p for p in self.loose if p.startswith(prefix)]:
                files[path] = self.loose[path]
                self._loose_pop(path)
        for path, entry in files.items():
            self._place(path, entry, touched)

    def _place(self, path: str, entry: tuple[str, str], touched: set[str]) -> None:
        owner = self.owner(path)
        if owner is None:
            self._loose_add(path, entry)
            return
        rel = path[len(owner) + 1:] if owner else path
        self.skill(owner).files[rel] = entry
        touched.add(owner)

    # ---- one commit at a time

    def read(self, log: bytes, where: Path) -> None:
        """Apply ``git log --first-parent --reverse --raw -z`` output (``_log_chain``), oldest commit first."""
        for record in read_log(log, 0, where):
            when = iso_time(record.time)
            body = record.body
            if len(body) % 2:
                raise BuildError(f"{where}: unexpected `git log --raw` output in commit {record.commit}")
            changes: list[tuple[str, str, str, bool]] = []
            for i in range(0, len(body), 2):
                status = body[i].decode("ascii", "replace")
                fields = status[1:].split(" ")
                if not status.startswith(":") or len(fields) != 5:
                    raise BuildError(f"{where}: unexpected `git log --raw` output in commit {record.commit}")
                _, new_mode, _, new_oid, change = fields
                path = body[i + 1].decode("utf-8", "surrogateescape")
                if self.base:
                    if not path.startswith(self.base + "/"):
                        continue
                    path = path[len(self.base) + 1:]
                changes.append((path, new_mode, new_oid, change == "D" or new_oid == _EMPTY_OID))
            self._commit(record.commit, when, changes)
            self.position += 1

    def _commit(self, commit: str, when: str, changes: Sequence[tuple[str, str, str, bool]]) -> None:
        """The marks first, so that a new skill's files go straight to it; then every file where it belongs."""
        touched: set[str] = set()
        for path, _, _, deleted in changes:
            folder, _, name = path.rpartition("/")
            if name in SKILL_FILES and deleted == self._holds(folder, name) \
                    and self._mark(folder, -1 if deleted else 1):
                self._regroup(folder, touched)
        for path, mode, oid, deleted in changes:
            owner = self.owner(path)
            if owner is None:
                if deleted:
                    self._loose_pop(path)
                else:
                    self._loose_add(path, (mode, oid))
                continue
            rel = path[len(owner) + 1:] if owner else path
            files = self.skill(owner).files
            if deleted:
                files.pop(rel, None)
            else:
                files[rel] = (mode, oid)
            touched.add(owner)
        self._snapshots(commit, when, touched)

    def _loose_add(self, path: str, entry: tuple[str, str]) -> None:
        if path not in self.loose:
            folder = path
            while folder:
                folder = folder.rpartition("/")[0]
                self.loose_below[folder] = self.loose_below.get(folder, 0) + 1
        self.loose[path] = entry

    def _loose_pop(self, path: str) -> tuple[str, str] | None:
        entry = self.loose.pop(path, None)
        if entry is not None:
            folder = path
            while folder:
                folder = folder.rpartition("/")[0]
                self.loose_below[folder] -= 1
        return entry

    def _holds(self, folder: str, name: str) -> bool:
        """Whether ``folder/name`` is a file the walk holds now (before this change)."""
        path = f"{folder}/{name}" if folder else name
        owner = self.owner(path)
        if owner is None:
            return path in self.loose
        return (path[len(owner) + 1:] if owner else path) in self.skill(owner).files

    def _snapshots(self, commit: str, when: str, touched: set[str]) -> None:
        gone: dict[str, str] = {}  # key of the state a skill left -> its folder
        new: list[tuple[str, Snapshot]] = []
        for folder in sorted(touched):
            walk = self.skill(folder)
            live = self._outermost(folder)
            entries = tuple(sorted((p, m, o) for p, (m, o) in walk.files.items())) if live else ()
            snap = Snapshot(commit, when, self.position, entries) if entries else None
            key = snap.key if snap else None
            if key == walk.last_key:
                continue
            if snap is None and walk.last_key is not None:
                gone.setdefault(walk.last_key, folder)
            elif snap is not None and walk.last_key is None and not walk.snapshots:
                new.append((folder, snap))
            walk.last_key = key
            if snap is not None:
                walk.snapshots.append(snap)
        for folder, snap in new:  # `git mv` of a whole skill: the same files at a new path continue its history
            old = gone.pop(snap.key, None)
            if old is not None:  # its versions keep the commits that first published them
                self.skill(folder).snapshots = self.skill(old).snapshots
                self.open.pop(old, None)
                self.moved[folder] = self.moved.pop(old, old)


def _log_chain(top: Path, pathspecs: Sequence[str], since: str | None) -> bytes:
    revs = [f"{since}..HEAD"] if since else ["HEAD"]
    log = git_output(["log", "--first-parent", "--reverse", "--raw", "-r", "-z", "--no-renames", "--no-abbrev",
                      log_format(), *revs, "--", *pathspecs], top)
    if log is None:
        raise BuildError(f"{top}: `git log` failed; cannot read the skills' history")
    return log


def _extends(top: Path, old: str) -> bool:
    """Whether HEAD's first-parent chain passes through ``old``: then only the commits after it are new."""
    chain = git_output(["log", "--first-parent", "--format=%P", f"{old}..HEAD"], top)
    if not chain:
        return False
    oldest = chain.decode("ascii").strip().splitlines()[-1].split()
    return bool(oldest) and oldest[0] == old


@dataclass(frozen=True)
class _Kept:
    """The walk a build saved in its state for the same repository, scope and format, as read back."""

    head: str
    position: int
    lines: dict[str, bytes]  # each skill's line, by its path
    moved: dict[str, str]
    rest: dict[str, Any]  # the marks and loose paths, needed only to read on from ``head``

    def walk(self, base: str, root_skill: bool) -> _Walk | None:
        """The walk made again, to read the commits after ``head``; None when the saved state does not fit."""
        with suppress(ValueError, KeyError, TypeError, IndexError, AttributeError):
            walk = _Walk(base, dict(self.lines), {}, self.position, root_skill=root_skill, moved=dict(self.moved))
            for path, entry in self.rest["loose"].items():
                walk._loose_add(path, (entry[0], entry[1]))
            for folder in self.rest["marks"]:
                walk._mark(folder, 1)
                walk.marks[folder] = int(self.rest["marks"][folder])
            return walk
        return None


def _kept(state: Path, ident: str) -> _Kept | None:
    """The walk saved in ``state`` when it was saved for ``ident``, read once."""
    with suppress(OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        header, shared, *skill_lines = state.read_bytes().split(b"\n")
        saved = json.loads(header)
        if json.dumps({k: saved.get(k) for k in json.loads(ident)}, sort_keys=True) != ident:
            return None
        rest = json.loads(shared)
        moved = {str(new): str(old) for new, old in rest["moved"].items()}
        return _Kept(str(saved["head"]), int(saved["position"]),
                     {_line_path(line): line for line in skill_lines if line}, moved, rest)
    return None


def read_git_history(top: Path | None, pathspecs: Sequence[str], state: Path | None = None, *, base: str = "",
                     root_skill: bool = False) -> GitHistory:
    """One ``git log`` over the first-parent chain of HEAD below ``pathspecs`` (relative to ``top``); skills keyed
    by their path below ``base`` (the registry's folder, relative to ``top``).

    With ``state`` (a file in the builder's own state folder, never in the checkout) the walk is kept there: a
    rebuild at the same HEAD takes its lines as kept, and one whose HEAD extends the chain it saw reads only the
    new commits. Outside git, or in a repository without commits, the history is empty (``kind`` "none").
    """
    if top is None:
        return GitHistory()
    head_text = git_output(["rev-parse", "--verify", "-q", "HEAD"], top)
    if not head_text:
        return GitHistory(top=top)
    head = head_text.decode("ascii").strip()
    shallow = (git_output(["rev-parse", "--is-shallow-repository"], top) or b"").strip() == b"true"
    ident = json.dumps({"format": WALK_FORMAT, "top": str(top), "scope": list(pathspecs), "base": base,
                        "root": root_skill}, sort_keys=True)
    kept = _kept(state, ident) if state is not None and not shallow else None
    if kept is not None and kept.head == head:  # its lines are the answer: the walk is not made again
        lines, moved = kept.lines, kept.moved
    else:
        walk = kept.walk(base, root_skill) if kept is not None and _extends(top, kept.head) else None
        if walk is not None and kept is not None:
            walk.read(_log_chain(top, pathspecs, kept.head), top)
        else:
            walk = _Walk(base, root_skill=root_skill)
            walk.read(_log_chain(top, pathspecs, None), top)
        lines, moved = walk.finish(), walk.moved
        if state is not None and not shallow:
            first = json.dumps({**json.loads(ident), "head": head, "position": walk.position}, sort_keys=True)
            shared = json.dumps({"marks": walk.marks, "loose": {p: list(e) for p, e in walk.loose.items()},
                                 "moved": walk.moved}, sort_keys=True, separators=(",", ":"))
            with suppress(OSError):
                write_atomic(state, b"\n".join([first.encode(), shared.encode(),
                                                *(lines[path] for path in sorted(lines))]) + b"\n")
    keyed = {("." if path == "" else path): line for path, line in lines.items()}
    return GitHistory("shallow" if shallow else "complete", top, head, keyed,
                      {new: old for new, old in moved.items() if new in lines})


def read_skills_history(root: Path, scope: Sequence[str] = (), state: Path | None = None, *,
                        root_skill: bool = False) -> GitHistory:
    """The history of the registry's skills: ``scope`` lists where skills live (folders or glob patterns relative
    to ``root``, the registry's folder; ``root`` itself when empty), wherever ``root`` sits in its repository."""
    top = git_top(root)
    if top is None:
        return GitHistory()
    root = root.resolve()
    base = root.relative_to(top).as_posix() if root != top else ""
    return read_git_history(top, pathspecs(base, scope), state, base=base, root_skill=root_skill)
