"""The skills installed in a project (or for the user), kept in step with the lock file.

Each operation checks everything it can before it writes anything, writes each skill with the atomic
installer, and rewrites the lock after every skill, so the lock always describes what is on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.errors import ClientError, UsageError
from ..core.model import short_digest
from . import foreign
from .folder_hash import computed_hash
from .install import (
    FetchedSkill,
    LocalState,
    digest_matches,
    fetch_skill,
    fetch_version,
    local_state,
    read_installed,
    remove_folder,
    unified_diff,
    write_skill,
)
from .locations import require_skill_name
from .lock import Lock, LockEntry, recorded, write_lock
from .pins import bind
from .registry import Registry
from .targets import Refused, destinations, writable_folder
from .transport import NotFound
from .versions import PublishedVersions, choose, is_digest, read_history, unavailable, yanked_warning

RegistryFor = Callable[[str], Registry]


class LocallyModified(Refused):
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
    previous_version: str | None = None  # the metadata.version before an update
    note: str = ""  # why a skill another tool recorded was left alone


@dataclass(frozen=True)
class Verified:
    name: str
    target: str
    state: LocalState


def _bound(lock: Lock, entries: Sequence[LockEntry], registry_for: RegistryFor) -> RegistryFor:
    """``registry_for``, each registry bound to the roots the lock pins (client/pins.py) before anything is read:
    those of its URL, and those of every entry in ``entries`` read through it, whatever their order."""
    for entry in entries:
        bind(registry_for(entry.registry), lock, (entry,))
    return lambda url: bind(registry_for(url), lock)


def _entry(skill: FetchedSkill, targets: Sequence[str], registry: Registry) -> LockEntry:
    """The lock entry of ``skill``, recording the root its registry was verified from: the pinned one, when the
    lock pins one (a pin is never replaced here)."""
    root, root_version = registry.trust_root or (None, 1)
    return LockEntry(skill.name, skill.registry, skill.version, skill.digest, tuple(sorted(set(targets))),
                     skill.hashes, computed_hash({f.path: f.data for f in skill.files}), skill.archive_sha256,
                     root, root_version)


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
        lost = f"{name} was changed locally ({detail}); {what} would lose those changes"
        raise LocallyModified(f"{lost}. Use --force to do it anyway",
                              f"{lost}, and this tool never does that; nothing was changed")


def _write(lock: Lock, entry: LockEntry) -> Lock:
    lock = lock.with_entry(entry)
    write_lock(lock)
    return lock


def choose_version(registry: Registry, name: str, spec: str | None) -> Callable[[], FetchedSkill]:
    """The download of NAME or NAME@SPEC (a metadata.version or a digest), chosen as ``install`` chooses."""
    return _choose(registry, name, spec)[1]


def _choose(registry: Registry, name: str, spec: str | None) -> tuple[str, Callable[[], FetchedSkill]]:
    """(digest, download) for NAME, NAME@DIGEST or NAME@VERSION: from the skill's versions.json, or from its
    detail document on a registry that publishes no version history. Nothing is downloaded yet."""
    history = read_history(registry, name)
    if history is not None:
        chosen, warnings = choose(history, name, spec)
        for warning in warnings:
            registry.warn(warning)
        return chosen.digest, lambda: fetch_version(registry, name, chosen, history.where)
    detail = registry.detail(name)
    published = str(detail["digest"])
    if spec is not None and not (digest_matches(published, spec) if is_digest(spec) else detail.get("version") == spec):
        raise ClientError(f"{name}: the registry publishes {short_digest(published)}…, not {spec}, and keeps no "
                          f"older versions (no versions.json); install {name} without @ to take the published one")
    return published, lambda: fetch_skill(registry, name, detail=detail)


def install(lock: Lock, registry: Registry, wanted: Sequence[tuple[str, str | None]], folders: Sequence[Path], *,
            typed: Sequence[Path] = (), force: bool = False, frozen: bool = False) -> tuple[Lock, list[Change]]:
    """Install each NAME[@DIGEST|@VERSION] into ``folders`` (skills folders; the skill goes into folder/NAME),
    each an agent's skill folder or one of ``typed`` (the --dir the user typed on this command line).

    A skill already in the lock at another digest is brought to the new one in every folder it is in.
    """
    allowed = destinations(lock, typed)
    bind(registry, lock)
    changes = []
    for name, spec in wanted:
        require_skill_name(name)
        if name in lock.foreign and not force:
            other = lock.foreign[name]
            held = f"{name} is in {lock.path.name} from another tool ({other.source_type} source)"
            raise Refused(f"{held}; use --force to install it with skillreg instead (the entry then becomes ours)",
                          f"{held}; this tool never replaces another tool's entry; nothing was changed")
        requested = [lock.target(folder / name) for folder in folders]
        for target in requested:  # before any request
            writable_folder(lock, target, name, allowed, recorded=False)
        published, download = _choose(registry, name, spec)
        entry = lock.entries.get(name)
        same = entry is not None and entry.digest == published
        targets = sorted(set(requested) | set(entry.targets if entry else ()))
        if frozen and (entry is None or entry.digest != published or set(requested) - set(entry.targets)):
            held = "not in the lock" if entry is None else f"the lock has {short_digest(entry.digest)}…"
            asked = "the registry publishes" if spec is None else f"{name}@{spec} is"
            raise ClientError(f"{name}: --frozen: installing it would change skills-lock.json "
                              f"({held}, {asked} {short_digest(published)}…); nothing was changed")
        if entry is not None and same and all(t in entry.targets and local_state(lock.folder(t), entry.files).clean
                                              for t in requested):
            if entry.registry != registry.url:  # the same files, now from another registry, and its root
                root, root_version = registry.trust_root or (None, 1)
                lock = _write(lock, replace(entry, registry=registry.url, trust_root=root,
                                            trust_root_version=root_version))
            changes.append(Change(name, "unchanged", entry.version, published, None, tuple(targets)))
            continue
        skill = download()
        new_files = skill.hashes
        todo, modified = [], []
        for target in targets:
            folder = lock.folder(target)
            if entry is not None and target in entry.targets:
                state = local_state(folder, entry.files)
                if same and (state.clean or target not in requested):
                    continue  # in place already, or another folder this install was not asked about
                writable_folder(lock, target, name, allowed, recorded=target not in requested)
                edited = _modified(folder, entry.files, new_files)
                if edited is not None:
                    modified.append((target, edited))
            else:
                writable_folder(lock, target, name, allowed, recorded=target not in requested)
                _refuse_other_skill(folder, target, name)
                taken = folder.exists() or folder.is_symlink()
                if not force and taken and not local_state(folder, new_files).clean:
                    there = f"{target} already exists and is not in {lock.path.name}"
                    raise Refused(f"{there}; use --force to replace it",
                                  f"{there}; this tool never replaces a folder it did not install; nothing was changed")
            todo.append(target)
        if not force:
            _refuse_modified(name, modified, "installing")
        with recorded(lock.with_entry(_entry(skill, targets, registry))) as lock:
            for target in todo:
                write_skill(skill, lock.folder(target))
        action = "installed" if entry is None or entry.digest == published else "updated"
        changes.append(Change(name, action, skill.version, skill.digest, entry.digest if entry else None,
                              tuple(todo), previous_version=entry.version if entry else None))
    return lock, changes


def _refuse_other_skill(folder: Path, target: str, name: str) -> None:
    """Refuse, even with --force, to install ``name`` over a folder holding another skill: one whose SKILL.md
    names a skill the slug rule could not give ``name`` (two skills of one name sit side by side, each in the
    folder of its own slug)."""
    from ..core.frontmatter import parse_skill_md
    from ..core.slugs import slug_fits
    from .install import MAX_FRONTMATTER_BYTES

    skill_md = folder / "SKILL.md"
    try:
        if skill_md.is_symlink() or not skill_md.is_file():
            return
        with skill_md.open("rb") as fh:  # the frontmatter is all it needs: a bounded read
            head = fh.read(MAX_FRONTMATTER_BYTES + 8)
        parsed = parse_skill_md(head, str(skill_md), max_frontmatter_bytes=MAX_FRONTMATTER_BYTES)
    except OSError:
        return
    declared = parsed.frontmatter.data.get("name") if parsed.frontmatter is not None else None
    if isinstance(declared, str) and declared.strip() and not slug_fits(name, declared):
        raise ClientError(f"{target} holds the skill {declared!r}, not {name}; installing {name} there would "
                          "overwrite it, so nothing was changed: move that skill, or install into another --dir")


@dataclass(frozen=True)
class _Restore:
    entry: LockEntry
    registry: Registry
    todo: tuple[str, ...]  # the folders to write again
    download: Callable[[], FetchedSkill] | None  # None: nothing to fetch (left in place, or gone)
    gone: bool = False  # the registry publishes nothing of the skill: no versions.json, no detail document


def _plan_restore(lock: Lock, entry: LockEntry, registry: Registry) -> tuple[_Restore, str | None]:
    """What restoring ``entry`` takes, and why it cannot be done if it cannot (checked before anything is written).

    The locked digest is looked up in the skill's versions.json (one request, 304 when unchanged), so an old
    version restores like the newest; a yanked one with a warning; one without files fails, saying why."""
    todo = tuple(t for t in entry.targets if not local_state(lock.folder(t), entry.files).clean)
    name, locked = entry.name, f"{short_digest(entry.digest)}…"
    history = read_history(registry, name)
    if history is not None:
        version = history.by_digest(entry.digest)
        if version is None:
            problem = (f"{name}: the registry has no record of the locked version {locked} ({history.where})"
                       + (history.shallow or "; it is not in the git history the registry was built from (a "
                                             "version built from files never committed is not kept)")
                       + _next_step(history))
            if todo:
                return _Restore(entry, registry, (), None), problem
            registry.warn(f"{problem}; the installed copy matches the lock and was left in place")
            return _Restore(entry, registry, (), None), None
        if version.zip is None:
            if todo:
                return _Restore(entry, registry, (), None), str(unavailable(name, version))
            registry.warn(f"{unavailable(name, version)}; the installed copy matches the lock and was left in place")
            return _Restore(entry, registry, (), None), None
        if version.status == "yanked":
            registry.warn(yanked_warning(name, version) + ("; restoring it as the lock asks" if todo else
                                                           "; it stays installed as the lock asks"))
        return _Restore(entry, registry, todo, lambda: fetch_version(registry, name, version, history.where)), None
    detail = _published_detail(registry, name)
    if detail is None:
        return _Restore(entry, registry, todo, None, gone=True), None
    if detail["digest"] != entry.digest:
        return _Restore(entry, registry, (), None), (
            f"{name} (lock {locked}, registry {short_digest(detail['digest'])}…, which keeps no older versions: "
            f"no versions.json; `skillreg update {name}` takes its version)")
    return _Restore(entry, registry, todo, lambda: fetch_skill(registry, name, detail=detail)), None


def _next_step(history: PublishedVersions) -> str:
    """What to run when the locked version cannot come back: take the one the registry publishes now."""
    if history.latest is None:
        return f"; `skillreg info {history.name} --versions` lists the versions it keeps"
    now = next(v for v in history.versions if v.digest == history.latest)
    return f"; `skillreg install {history.name}` takes the version it publishes now, {now.label}"


def restore(lock: Lock, registry_for: RegistryFor, *, typed: Sequence[Path] = (), force: bool = False,
            frozen: bool = False) -> tuple[Lock, list[Change]]:
    """Make every folder in the lock hold its locked digest again, from the registry's history if need be.

    The lock never moves: a restore writes the files it records. A locked version that cannot be restored
    (taken down, withdrawn, pruned, never published) fails the whole restore before anything changes. A skill
    the registry does not publish at all any more (no versions.json, no detail) is left as it is and reported
    ("not published", with the folders that could not be restored); under ``frozen`` that fails too.
    Every folder to be written must be one ``writable_folder`` allows (``typed``: the --dir of this command),
    checked before any request."""
    allowed = destinations(lock, typed)
    for entry in sorted(lock.entries.values(), key=lambda e: e.name):
        for target in entry.targets:
            if not local_state(lock.folder(target), entry.files).clean:
                writable_folder(lock, target, entry.name, allowed, recorded=True)
    entries = sorted(lock.entries.values(), key=lambda e: e.name)
    registry_for = _bound(lock, entries, registry_for)
    plans, problems = [], []
    for entry in entries:
        plan, problem = _plan_restore(lock, entry, registry_for(entry.registry))
        plans.append(plan)
        if problem:
            problems.append(problem)
    others = [foreign.plan(lock, lock.foreign[name], registry_for) for name in sorted(lock.foreign)]
    if problems:
        raise ClientError(f"{'--frozen: ' if frozen else ''}cannot restore {'; '.join(problems)}; nothing was changed")
    gone = [p.entry for p in plans if p.gone]
    if frozen and gone:
        listed = ", ".join(f"{e.name} (lock {short_digest(e.digest)}…, not published)" for e in gone)
        raise ClientError(f"--frozen: the lock and the registry disagree: {listed}; nothing was changed")
    for plan in plans:
        if plan.todo and not force:
            # Only missing files lose nothing when written again; changed or added ones would be lost.
            _refuse_modified(plan.entry.name, [(t, s) for t in plan.todo if
                                               (s := local_state(lock.folder(t), plan.entry.files)).changed
                                               or s.added], "restoring")
    changes = []
    for plan in plans:
        entry = plan.entry
        if plan.gone:
            changes.append(Change(entry.name, "not published", entry.version, entry.digest, None, plan.todo))
            continue
        if plan.download is None or not plan.todo:
            changes.append(Change(entry.name, "unchanged", entry.version, entry.digest, None, entry.targets))
            continue
        skill = plan.download()
        new = entry if frozen else replace(entry, registry=plan.registry.url,
                                           computed_hash=entry.computed_hash or
                                           _entry(skill, (), plan.registry).computed_hash,
                                           archive_sha256=entry.archive_sha256 or skill.archive_sha256)
        if new == entry:  # the lock stays byte for byte as it is
            for target in plan.todo:
                write_skill(skill, lock.folder(target))
        else:
            with recorded(lock.with_entry(new)) as lock:
                for target in plan.todo:
                    write_skill(skill, lock.folder(target))
        changes.append(Change(entry.name, "restored", skill.version, skill.digest, None, plan.todo))
    for other in others:
        if other.download is not None:
            target = foreign.restore(lock, other)
            changes.append(Change(other.entry.name, "restored", None, "", None, (target,)))
        elif other.note:
            changes.append(Change(other.entry.name, "left alone", None, "", note=other.note))
    return lock, sorted(changes, key=lambda c: c.name)


def _published_detail(registry: Registry, name: str) -> Mapping[str, Any] | None:
    """The detail document, or None when the registry answers that it does not publish ``name`` (any more).
    A registry that is not there at all (its index is missing too) is an error, not a list of lost skills."""
    try:
        return registry.detail(name)
    except NotFound:
        registry.index()
        return None


def _selected(lock: Lock, names: Sequence[str], verb: str) -> list[LockEntry]:
    theirs = [n for n in names if n in lock.foreign]
    if theirs:
        raise UsageError(f"{', '.join(theirs)}: installed by another tool ({lock.foreign[theirs[0]].source_type} "
                         f"source, no skillreg fields in {lock.path.name}); skillreg leaves its entry alone: {verb} "
                         "it with that tool")
    missing = [n for n in names if n not in lock.entries]
    if missing:
        from ..core.suggest import did_you_mean

        hint = did_you_mean(missing[0], lock.entries) if len(missing) == 1 else ""
        raise UsageError(f"not installed (not in {lock.path.name}): {', '.join(missing)}{hint}")
    return [lock.entries[n] for n in (names or sorted(lock.entries))]


def update(lock: Lock, names: Sequence[str], registry_for: RegistryFor, *, typed: Sequence[Path] = (),
           dry_run: bool = False, force: bool = False) -> tuple[Lock, list[Change]]:
    """Compare the lock with what each registry publishes and take new digests.

    The check costs one request per registry when nothing changed (state.json, answered 304), else one more
    per skill checked (its head.json: 304 or a few hundred bytes), whatever the registry's size; a registry
    built before state.json existed is compared through its index.json (one request, 304 when unchanged).
    A skill whose latest moved is brought to its versions.json's ``latest``: the newest version that is not
    yanked (two more requests: versions.json and the zip). A skill that changes is written only into folders
    ``writable_folder`` allows (``typed``: the --dir of this command)."""
    allowed = destinations(lock, typed)
    entries = _selected(lock, names, "update")
    for entry in entries:  # every folder is checked before anything is fetched or written
        for target in entry.targets:
            lock.folder(target)
    registry_for = _bound(lock, entries, registry_for)
    published = _Published()
    changes = []
    for entry in entries:
        registry = registry_for(entry.registry)
        latest = published.latest(registry, entry.name)
        if latest is None:
            changes.append(Change(entry.name, "not published", entry.version, entry.digest, None, entry.targets))
            continue
        if latest == entry.digest:
            changes.append(Change(entry.name, "unchanged", entry.version, entry.digest, None, entry.targets))
            continue
        history = read_history(registry, entry.name)
        if history is not None and history.latest is None:  # it left the registry; its versions stay by digest
            changes.append(Change(entry.name, "not published", entry.version, entry.digest, None, entry.targets))
            continue
        skill = _newest(registry, entry.name, history)
        if skill.digest == entry.digest:
            changes.append(Change(entry.name, "unchanged", entry.version, entry.digest, None, entry.targets))
            continue
        diff = unified_diff(_locked_files(lock, entry, registry, history), skill.files)
        if dry_run:
            changes.append(Change(entry.name, "would update", skill.version, skill.digest, entry.digest,
                                  entry.targets, diff, entry.version))
            continue
        for target in entry.targets:
            writable_folder(lock, target, entry.name, allowed, recorded=True)
        modified = [(t, s) for t in entry.targets
                    if (s := _modified(lock.folder(t), entry.files, skill.hashes)) is not None]
        if not force:
            _refuse_modified(entry.name, modified, "updating")
        with recorded(lock.with_entry(_entry(skill, entry.targets, registry))) as lock:
            for target in entry.targets:
                write_skill(skill, lock.folder(target))
        changes.append(Change(entry.name, "updated", skill.version, skill.digest, entry.digest, entry.targets, diff,
                              entry.version))
    return lock, changes


def _locked_files(lock: Lock, entry: LockEntry, registry: Registry,
                  history: PublishedVersions | None) -> Mapping[str, bytes]:
    """The locked version's bytes, the old side of an update's diff: read from an installed folder that still
    matches the lock, else fetched from the registry's history (one more request: the zip), else none (every file
    then shows as added). Local edits are never shown as part of the update."""
    for target in entry.targets:
        folder = lock.folder(target)
        if local_state(folder, entry.files).clean:
            return read_installed(folder)
    found = history.by_digest(entry.digest) if history is not None else None
    if history is None or found is None or found.zip is None:
        return {}
    return {f.path: f.data for f in fetch_version(registry, entry.name, found, history.where).files}


class _Published:
    """What each registry publishes as a skill's current digest, read as cheaply as the registry allows."""

    def __init__(self) -> None:
        self._states: dict[str, str | None] = {}  # registry URL -> state.json's digest; None: it has none
        self._indexes: dict[str, Mapping[str, Any]] = {}

    def latest(self, registry: Registry, name: str) -> str | None:
        """The digest ``update`` compares with the lock (head.json's ``latest``, or the index's digest on a
        registry without state.json); None when the registry does not publish ``name`` any more."""
        if registry.url not in self._states:
            state = registry.state()
            self._states[registry.url] = str(state["digest"]) if state is not None else None
        state_digest = self._states[registry.url]
        if state_digest is not None:
            head = registry.head(name, state_digest)
            return None if head is None or head.get("latest") is None else str(head["latest"])
        if registry.url not in self._indexes:
            self._indexes[registry.url] = {str(s.get("name")): s for s in registry.index()["skills"]
                                           if isinstance(s, dict)}
        listed = self._indexes[registry.url].get(name)
        return None if listed is None else str(listed.get("digest"))


def _newest(registry: Registry, name: str, history: PublishedVersions | None) -> FetchedSkill:
    """The version ``update`` moves to: the history's ``latest`` (never a yanked one), else the detail's digest."""
    if history is None:
        return fetch_skill(registry, name)
    chosen, _ = choose(history, name, None)
    return fetch_version(registry, name, chosen, history.where)


def remove(lock: Lock, names: Sequence[str], *, typed: Sequence[Path] = (),
           force: bool = False) -> tuple[Lock, list[Change]]:
    """Delete each skill's folders and its lock entry, after checking every one of them: a name not in the lock,
    a folder the command may not delete or local edits (without ``force``) refuse the whole command, nothing
    removed. Deleting is writing: a folder that exists is deleted only where ``writable_folder`` allows
    (``typed``: the --dir of this command); one already gone is only forgotten."""
    if not names:
        raise UsageError("name the skills to remove")
    allowed = destinations(lock, typed)
    entries = _selected(lock, names, "remove")
    for entry in entries:
        for target in entry.targets:
            folder = lock.folder(target)
            if folder.exists() or folder.is_symlink():
                writable_folder(lock, target, entry.name, allowed, recorded=True)
    if not force:
        for entry in entries:
            states = [(t, local_state(lock.folder(t), entry.files)) for t in entry.targets]
            _refuse_modified(entry.name, [(t, s) for t, s in states if not s.clean and not s.absent], "removing it")
    changes = []
    for entry in entries:
        with recorded(lock.without(entry.name)) as lock:
            for target in entry.targets:
                remove_folder(lock.folder(target))
        changes.append(Change(entry.name, "removed", entry.version, entry.digest, None, entry.targets))
    return lock, changes


def verify(lock: Lock, names: Sequence[str] = ()) -> list[Verified]:
    """Every installed folder against the file hashes in the lock: changed, added, missing."""
    ours = [n for n in names if n not in lock.foreign]
    if names and not ours:
        return []
    return [Verified(entry.name, target, local_state(lock.folder(target), entry.files))
            for entry in _selected(lock, ours, "verify") for target in entry.targets]


def verify_foreign(lock: Lock, names: Sequence[str] = ()) -> list[foreign.ForeignCheck]:
    """The skills another tool recorded (all, or those of ``names``), checked through their ``computedHash``."""
    return [check for name in sorted(lock.foreign) if not names or name in names
            for check in foreign.check(lock, lock.foreign[name])]
