"""The skills installed in a project (or for the user), kept in step with the lock file.

Each operation checks everything it can before it writes anything, writes each skill with the atomic
installer, and rewrites the lock after every skill, so the lock always describes what is on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ClientError, UsageError
from ..core.model import short_digest
from .install import (
    FetchedSkill,
    LocalState,
    digest_matches,
    fetch_skill,
    local_state,
    read_installed,
    remove_folder,
    unified_diff,
    write_skill,
)
from .lock import Lock, LockEntry, recorded, write_lock
from .registry import NotFound, Registry, check_name

RegistryFor = Callable[[str], Registry]


class LocallyModified(ClientError):
    """Installed files were edited; overwriting or removing them needs --force."""


@dataclass(frozen=True)
class Change:
    name: str
    action: str  # installed | updated | unchanged | restored | removed | would update | not published
    version: str | None
    digest: str
    previous: str | None = None  # the digest before an update
    targets: tuple[str, ...] = ()
    diff: str = ""


@dataclass(frozen=True)
class Verified:
    name: str
    target: str
    state: LocalState


def _entry(skill: FetchedSkill, targets: Sequence[str]) -> LockEntry:
    return LockEntry(skill.name, skill.registry, skill.version, skill.digest, tuple(sorted(set(targets))),
                     skill.hashes)


def _published_files(detail: Mapping[str, Any]) -> dict[str, str]:
    return {f["path"]: f["sha256"] for f in detail.get("files", [])
            if isinstance(f, dict) and isinstance(f.get("path"), str) and isinstance(f.get("sha256"), str)}


def _modified(folder: Path, recorded: Mapping[str, str], new: Mapping[str, str]) -> LocalState | None:
    """The local edits in ``folder``, if any. A folder that already holds the new files is not edited:
    an install killed after its swap but before the lock was written leaves exactly that."""
    state = local_state(folder, recorded)
    if state.clean or state.absent or local_state(folder, new).clean:
        return None
    return state


def _refuse_modified(name: str, problems: list[tuple[str, LocalState]], what: str) -> None:
    if problems:
        detail = "; ".join(f"{target}: {state.describe()}" for target, state in problems)
        raise LocallyModified(f"{name} was changed locally ({detail}); {what} would lose those changes. "
                              "Use --force to do it anyway")


def _write(lock: Lock, entry: LockEntry) -> Lock:
    lock = lock.with_entry(entry)
    write_lock(lock)
    return lock


def install(lock: Lock, registry: Registry, wanted: Sequence[tuple[str, str | None]], folders: Sequence[Path], *,
            force: bool = False, frozen: bool = False) -> tuple[Lock, list[Change]]:
    """Install each NAME[@DIGEST] into ``folders`` (agent skill folders; the skill goes into folder/NAME).

    A skill already in the lock at another digest is brought to the new one in every folder it is in.
    """
    changes = []
    for name, digest in wanted:
        check_name(name)
        detail = registry.detail(name)
        published = str(detail["digest"])
        if digest is not None and not digest_matches(published, digest):
            raise ClientError(f"{name}: the registry publishes {short_digest(published)}…, not {digest}; "
                              f"install {name} without @DIGEST to take the published version")
        entry = lock.entries.get(name)
        requested = [lock.target(folder / name) for folder in folders]
        same = entry is not None and entry.digest == published
        targets = sorted(set(requested) | set(entry.targets if entry else ()))
        if frozen and (entry is None or entry.digest != published or set(requested) - set(entry.targets)):
            held = "not in the lock" if entry is None else f"the lock has {short_digest(entry.digest)}…"
            raise ClientError(f"{name}: --frozen: installing it would change skills-lock.json "
                              f"({held}, the registry publishes {short_digest(published)}…); nothing was changed")
        new_files = _published_files(detail)
        todo, modified = [], []
        for target in targets:
            folder = lock.folder(target)
            if entry is not None and target in entry.targets:
                state = local_state(folder, entry.files)
                if same and (state.clean or target not in requested):
                    continue  # in place already, or another folder this install was not asked about
                edited = _modified(folder, entry.files, new_files)
                if edited is not None:
                    modified.append((target, edited))
            elif not force and (folder.exists() or folder.is_symlink()) and not local_state(folder, new_files).clean:
                raise ClientError(f"{target} already exists and is not in {lock.path.name}; use --force to replace it")
            todo.append(target)
        if not force:
            _refuse_modified(name, modified, "installing")
        if not todo:
            assert entry is not None
            if entry.registry != registry.url:  # the same files, now from another registry
                lock = _write(lock, LockEntry(name, registry.url, entry.version, entry.digest, entry.targets,
                                              entry.files))
            changes.append(Change(name, "unchanged", entry.version, published, None, tuple(targets)))
            continue
        skill = fetch_skill(registry, name, digest=digest, detail=detail)
        with recorded(lock.with_entry(_entry(skill, targets))) as lock:
            for target in todo:
                write_skill(skill, lock.folder(target))
        action = "installed" if entry is None or entry.digest == published else "updated"
        changes.append(Change(name, action, skill.version, skill.digest, entry.digest if entry else None,
                              tuple(todo)))
    return lock, changes


def restore(lock: Lock, registry_for: RegistryFor, *, force: bool = False,
            frozen: bool = False) -> tuple[Lock, list[Change]]:
    """Make every folder in the lock hold its skill again; with ``frozen``, only ever the locked digest.

    A skill the registry no longer publishes is left as it is and reported ("not published", with the folders
    that could not be restored); under ``frozen`` it fails the whole restore before anything changes."""
    plans, gone = [], []
    for entry in sorted(lock.entries.values(), key=lambda e: e.name):
        registry = registry_for(entry.registry)
        detail = _published_detail(registry, entry.name)
        if detail is None:
            gone.append(entry)
        else:
            plans.append((entry, registry, detail))
    drift = [(e, d) for e, _, d in plans if d["digest"] != e.digest]
    if frozen and (drift or gone):
        listed = ", ".join([f"{e.name} (lock {short_digest(e.digest)}…, registry {short_digest(d['digest'])}…)"
                            for e, d in drift] +
                           [f"{e.name} (lock {short_digest(e.digest)}…, not published)" for e in gone])
        raise ClientError(f"--frozen: the lock and the registry disagree: {listed}; nothing was changed")
    work = []
    for entry, registry, detail in plans:
        states = {t: local_state(lock.folder(t), entry.files) for t in entry.targets}
        new_files = _published_files(detail)
        modified = [(t, s) for t in entry.targets
                    if (s := _modified(lock.folder(t), entry.files, new_files)) is not None]
        if not force:
            _refuse_modified(entry.name, modified, "restoring")
        moved = detail["digest"] != entry.digest
        todo = [t for t, s in states.items() if moved or not s.clean]
        work.append((entry, registry, detail, todo))
    changes = []
    for entry, registry, detail, todo in work:
        if not todo:
            changes.append(Change(entry.name, "unchanged", entry.version, entry.digest, None, entry.targets))
            continue
        skill = fetch_skill(registry, entry.name, detail=detail)
        with recorded(lock.with_entry(_entry(skill, entry.targets))) as lock:
            for target in todo:
                write_skill(skill, lock.folder(target))
        moved = skill.digest != entry.digest
        changes.append(Change(entry.name, "updated" if moved else "restored", skill.version, skill.digest,
                              entry.digest if moved else None, tuple(todo)))
    for entry in gone:
        lost = tuple(t for t in entry.targets if not local_state(lock.folder(t), entry.files).clean)
        changes.append(Change(entry.name, "not published", entry.version, entry.digest, None, lost))
    return lock, sorted(changes, key=lambda c: c.name)


def _published_detail(registry: Registry, name: str) -> Mapping[str, Any] | None:
    """The detail document, or None when the registry answers that it does not publish ``name`` (any more).
    A registry that is not there at all (its index is missing too) is an error, not a list of lost skills."""
    try:
        return registry.detail(name)
    except NotFound:
        registry.index()
        return None


def _selected(lock: Lock, names: Sequence[str]) -> list[LockEntry]:
    missing = [n for n in names if n not in lock.entries]
    if missing:
        from ..core.suggest import did_you_mean

        hint = did_you_mean(missing[0], lock.entries) if len(missing) == 1 else ""
        raise UsageError(f"not installed (not in {lock.path.name}): {', '.join(missing)}{hint}")
    return [lock.entries[n] for n in (names or sorted(lock.entries))]


def update(lock: Lock, names: Sequence[str], registry_for: RegistryFor, *, dry_run: bool = False,
           force: bool = False) -> tuple[Lock, list[Change]]:
    """Compare the lock with each registry's index (one request, 304 when nothing changed) and take new digests."""
    entries = _selected(lock, names)
    for entry in entries:  # every folder is checked before anything is fetched or written
        for target in entry.targets:
            lock.folder(target)
    indexes: dict[str, Mapping[str, Any]] = {}
    changes = []
    for entry in entries:
        registry = registry_for(entry.registry)
        if registry.url not in indexes:
            indexes[registry.url] = {str(s.get("name")): s for s in registry.index()["skills"] if isinstance(s, dict)}
        listed = indexes[registry.url].get(entry.name)
        if listed is None:
            changes.append(Change(entry.name, "not published", entry.version, entry.digest, None, entry.targets))
            continue
        if listed.get("digest") == entry.digest:
            changes.append(Change(entry.name, "unchanged", entry.version, entry.digest, None, entry.targets))
            continue
        skill = fetch_skill(registry, entry.name)
        if skill.digest == entry.digest:
            changes.append(Change(entry.name, "unchanged", entry.version, entry.digest, None, entry.targets))
            continue
        current = next((lock.folder(t) for t in entry.targets if lock.folder(t).is_dir()), None)
        diff = unified_diff(read_installed(current) if current else {}, skill.files)
        if dry_run:
            changes.append(Change(entry.name, "would update", skill.version, skill.digest, entry.digest,
                                  entry.targets, diff))
            continue
        modified = [(t, s) for t in entry.targets
                    if (s := _modified(lock.folder(t), entry.files, skill.hashes)) is not None]
        if not force:
            _refuse_modified(entry.name, modified, "updating")
        with recorded(lock.with_entry(_entry(skill, entry.targets))) as lock:
            for target in entry.targets:
                write_skill(skill, lock.folder(target))
        changes.append(Change(entry.name, "updated", skill.version, skill.digest, entry.digest, entry.targets, diff))
    return lock, changes


def remove(lock: Lock, name: str, *, force: bool = False) -> tuple[Lock, Change]:
    entry = _selected(lock, [name])[0]
    states = [(t, local_state(lock.folder(t), entry.files)) for t in entry.targets]
    if not force:
        _refuse_modified(name, [(t, s) for t, s in states if not s.clean and not s.absent], "removing it")
    with recorded(lock.without(name)) as lock:
        for target in entry.targets:
            remove_folder(lock.folder(target))
    return lock, Change(name, "removed", entry.version, entry.digest, None, entry.targets)


def verify(lock: Lock, names: Sequence[str] = ()) -> list[Verified]:
    """Every installed folder against the file hashes in the lock: changed, added, missing."""
    return [Verified(entry.name, target, local_state(lock.folder(target), entry.files))
            for entry in _selected(lock, names) for target in entry.targets]
