"""``skills-lock.json``: what was installed where, from which registry, at which digest.

The file is shared with vercel's ``skills`` CLI (its format, and how our entries sit beside its own, is in
``lock_format``). One block per skill, sorted by name, two-space indent, a newline at the end: two branches that
each add a skill merge without conflict. The project lock sits in the project folder and records folders relative to
it; ``--global`` installs go to a lock in the user data folder and record ``~/`` paths. Targets are checked
on read, so a lock from a cloned repository cannot point an install outside the project.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.errors import ClientError, UsageError, disk_problem
from ..core.fs import acquire_flock, create_file, state_dir
from .documents import parse_json
from .folder_hash import computed_hash, folder_files
from .lock_format import LOCK_FILE, ForeignEntry, LockEntry, dumps, parse_document

__all__ = ["ForeignEntry", "Lock", "LockEntry", "locked", "peek_lock", "read_lock", "recorded", "write_lock"]

MAX_LOCK_BYTES = 64 * 1024 * 1024  # a lock lists the project's skills: a few hundred bytes each


@dataclass(frozen=True)
class Lock:
    path: Path
    base: Path  # the project folder (or the home folder for the user lock)
    global_: bool
    entries: Mapping[str, LockEntry]  # the skills this client installed
    foreign: Mapping[str, ForeignEntry] = field(default_factory=dict)  # the skills another tool recorded
    old_format: bool = False  # read from our first format: written in the shared one at once

    def folder(self, target: str) -> Path:
        """Where a recorded skill folder is, after checking that its real path stays inside the allowed root."""
        if self.global_:
            folder = Path(target).expanduser() if target.startswith("~/") else Path(target)
        else:
            folder = self.base / target
        return self.check_inside(folder)

    def target(self, folder: Path) -> str:
        """How ``folder`` is recorded: relative to the project, or below ~ for the user lock."""
        folder = Path(os.path.abspath(folder))
        home = Path(os.path.abspath(Path.home()))
        if self.global_:
            if not folder.is_relative_to(home) or folder == home:
                raise UsageError(f"{folder.parent} is outside your home folder {home}; --global installs into "
                                 "folders inside it (an agent's folder, or --dir with one inside your home folder)")
            self.check_inside(folder)
            return "~/" + folder.relative_to(home).as_posix()
        base = Path(os.path.abspath(self.base))
        if not folder.is_relative_to(base) or folder == base:
            elsewhere = (f"; for {folder.parent}, add --global (it is inside your home folder)"
                         if folder.is_relative_to(home) and folder != home and not base.is_relative_to(folder) else "")
            raise UsageError(f"{folder.parent} is outside the project {base}; a project installs into an agent's "
                             f"folder or a --dir inside the project{elsewhere}")
        self.check_inside(folder)
        return folder.relative_to(base).as_posix()

    def check_inside(self, folder: Path) -> Path:
        """``folder``, if its real path (every link on the way followed) is inside the project's real path, or
        the user's home folder for the user lock; a committed link such as ``.claude/skills -> ~/.config``
        would otherwise carry writes and deletes out of it."""
        root = Path.home().resolve() if self.global_ else self.base.resolve()
        try:
            real = folder.resolve()
        except (OSError, RuntimeError) as exc:  # a loop of links
            raise ClientError(f"cannot resolve {folder}: {exc}") from None
        if real == root or not real.is_relative_to(root):
            where = "your home folder" if self.global_ else "the project"
            typed = Path(os.path.abspath(folder))
            if typed != root and typed.is_relative_to(Path(os.path.abspath(Path.home() if self.global_
                                                                           else self.base))):
                raise ClientError(f"{folder} leads to {real}, outside {where} {root} (through a symbolic link); "
                                  "refusing to install or remove anything there")
            raise ClientError(f"{folder} is outside {where} {root}; refusing to install or remove anything there")
        return folder

    def with_entry(self, entry: LockEntry) -> Lock:
        """The lock with ``entry`` recorded (an entry of another tool of that name is taken over: only an
        explicit ``--force`` install asks for that)."""
        return replace(self, entries={**self.entries, entry.name: entry},
                       foreign={k: v for k, v in self.foreign.items() if k != entry.name})

    def without(self, name: str) -> Lock:
        return replace(self, entries={k: v for k, v in self.entries.items() if k != name})

    def dumps(self) -> bytes:
        return dumps(self.entries, self.foreign)


def user_lock_path() -> Path:
    import platformdirs

    return platformdirs.user_data_path("skillreg", appauthor=False) / LOCK_FILE


def lock_location(project: Path, global_: bool) -> tuple[Path, Path]:
    """(lock file, base folder) for a project or for the user's global installs."""
    if global_:
        return user_lock_path(), Path.home()
    return project / LOCK_FILE, project


WAIT_NOTICE = 1.0  # seconds of waiting for another writer before saying so


def side_lock_path(lock_path: Path) -> Path:
    """The file whose ``flock`` serialises changes to a lock file (the lock file itself is replaced by rename): in
    the user's state folder, keyed by the lock's real path, so the project's work tree (and its ``.git``) gets no
    file of ours and every path to one project takes the same lock."""
    real = os.path.join(os.path.realpath(lock_path.parent), lock_path.name)
    return state_dir() / "projects" / hashlib.sha256(os.fsencode(real)).hexdigest()[:16] / "lock"


@contextmanager
def locked(project: Path, *, global_: bool = False,
           waiting: Callable[[str], None] | None = None) -> Iterator[Lock]:
    """The lock, read while holding an exclusive ``flock`` that lasts until the block ends.

    Every command that changes a lock runs inside this block, so concurrent installs, updates and removes
    take turns and each one starts from what the previous one wrote. The kernel drops the ``flock`` when its
    holder exits, however it exits, so a killed process never leaves the lock stuck. The side file (in the user's
    state folder) is opened without following a link: a link in its place cannot point the lock at another file.
    """
    path, _ = lock_location(project, global_)
    side = side_lock_path(path)
    try:
        side.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(side, os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                     0o600)
    except OSError as exc:
        if side.is_symlink():
            raise ClientError(f"{side} is a symbolic link; the lock's side file must be a plain file "
                              "(delete the link and run the command again)") from None
        raise ClientError(f"cannot open {side}: {disk_problem(exc)}") from None
    try:
        acquire_flock(fd, patience=WAIT_NOTICE, on_wait=None if waiting is None else
                      lambda: waiting(f"waiting for another skillreg command to finish changing {path}"))
        _remove_stale_writes(path)
        lock = _read(project, global_)
        if lock.old_format:
            lock = replace(lock, old_format=False)
            write_lock(lock)
        yield lock
    finally:
        os.close(fd)  # releases the flock


def read_lock(project: Path, *, global_: bool = False) -> Lock:
    """The lock as it is on disk; one in our first format is written in the shared format first (under the
    flock), since vercel's CLI would read it as empty and overwrite it."""
    lock = _read(project, global_)
    if lock.old_format:
        with locked(project, global_=global_) as lock:
            pass
    return lock


def peek_lock(project: Path, *, global_: bool = False) -> Lock:
    """The lock as it is on disk, only read (one in our first format is not rewritten): for the commands that only
    read a registry, which need the roots the lock pins for it."""
    return _read(project, global_)


def _read(project: Path, global_: bool) -> Lock:
    path, base = lock_location(project, global_)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_LOCK_BYTES + 1)
        raw.decode("utf-8")
    except FileNotFoundError:
        return Lock(path, base, global_, {})
    except (OSError, UnicodeDecodeError) as exc:
        raise ClientError(f"cannot read {path}: {exc}") from None
    if len(raw) > MAX_LOCK_BYTES:
        raise ClientError(f"{path} is larger than {MAX_LOCK_BYTES:,} bytes; it is not a skills lock file")
    try:
        data = parse_json(raw, str(path))
    except ClientError as exc:
        raise ClientError(f"{exc}; fix it or delete it and install again") from None
    parsed = parse_document(data, path, global_)
    lock = Lock(path, base, global_, parsed.entries, parsed.foreign, parsed.old_format)
    return replace(lock, entries=migrated(lock)) if parsed.old_format else lock


def migrated(lock: Lock) -> dict[str, LockEntry]:
    """Entries of our first format with vercel's folder hash added, computed from a folder that still holds
    exactly the locked files (the archive's sha256 comes back when the skill is next downloaded)."""
    entries = {}
    for name, entry in lock.entries.items():
        computed = None
        for target in entry.targets:
            try:
                folder = lock.folder(target)  # a target that leads outside is reported by the commands that use it
                files = folder_files(folder) if folder.is_dir() else {}
            except (ClientError, OSError):
                continue
            if {path: hashlib.sha256(data).hexdigest() for path, data in files.items()} == dict(entry.files):
                computed = computed_hash(files)
                break
        entries[name] = replace(entry, computed_hash=computed)
    return entries


def write_lock(lock: Lock) -> None:
    with recorded(lock):
        pass


@contextmanager
def recorded(lock: Lock) -> Iterator[Lock]:
    """Record ``lock`` around the block that makes the disk match it.

    The new lock file is written and flushed beside the old one first, so a full disk fails before any folder
    changes; the block then changes the folders, and one rename (which needs no space) puts the new lock in
    place. If the block fails, the old lock stays and the new one is deleted.
    """
    tmp = lock.path.with_name(f".{lock.path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        if lock.global_:  # the user data folder may not exist yet; a project's folder does
            lock.path.parent.mkdir(parents=True, exist_ok=True)
        create_file(tmp, lock.dumps())
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ClientError(f"cannot write {lock.path}: {disk_problem(exc)}") from None
    try:
        yield lock
        os.replace(tmp, lock.path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ClientError(f"cannot write {lock.path}: {disk_problem(exc)}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _remove_stale_writes(path: Path) -> None:
    """Delete new lock files that a killed command left (every writer holds the flock, so none is in use)."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if name.startswith(f".{path.name}.") and name.endswith(".tmp"):
            with suppress(OSError):
                os.unlink(path.parent / name)
