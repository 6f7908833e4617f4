"""The output transaction: a build's staged units go into place all at once, or not at all.

A whole build swaps its staging folder in (atomically exchanged where Linux allows); a rebuild moves only the
units that changed under a journal, so that the next build, if this process dies part way, puts the previous
output back before doing anything else. Replaced folders go to trash deleted by a detached process.

The lock, the journal and the list of trash folders live in the user's state folder, keyed by the output's
real path, never beside the output or in the checkout: a repository can commit any file, and none of it is
ever read as the builder's own record. Recovery and trash removal touch only folders named as this module
names them, beside the output, and units below it reached without a symbolic link.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.config import RegistryConfig
from ..core.errors import BuildError, UsageError, os_error_message
from ..core.fs import LockHeld, create_file, exclusive_lock, remove_path, state_dir, swap_into, write_atomic
from ..core.loader import display_path
from ..core.urls import INDEX_PATH

JOURNAL_VERSION = 1


@dataclass(frozen=True)
class OutputPlace:
    """An output folder: as the user named it, its real path, and the builder's records about it."""

    out: Path  # for messages
    base: Path  # the real path; every folder the build makes is a sibling of it
    state: Path

    @property
    def journal(self) -> Path:
        return self.state / "journal.json"

    @property
    def manifest(self) -> Path:
        return self.state / "manifest.sqlite"

    @property
    def trash_records(self) -> Path:
        """One empty file per folder of ours beside the output that is to go: trash, and the staging folder of a
        build that is running (or was killed)."""
        return self.state / "trash"

    def fresh(self, kind: str) -> Path:
        """A new sibling name of ours: no earlier folder, committed or not, can already have it."""
        return self.base.with_name(f".{self.base.name}.{kind}-{os.getpid()}-{secrets.token_hex(8)}")

    def owns(self, name: object, kind: str) -> bool:
        """Whether ``name`` is one ``fresh(kind)`` makes: a plain name, so the path is a sibling of the output."""
        pattern = rf"\.{re.escape(self.base.name)}\.{kind}-[0-9]+-[0-9a-f]{{16}}"
        return isinstance(name, str) and re.fullmatch(pattern, name) is not None


def output_place(out: Path) -> OutputPlace:
    base = out.resolve()
    tag = hashlib.sha256(os.fsencode(base)).hexdigest()[:16]
    return OutputPlace(out, base, state_dir() / "builds" / tag)


class OutputBusy(BuildError):
    """Another build holds the output and the caller asked not to wait."""

    def __init__(self, out: Path, holder: int | None) -> None:
        who = f" (process {holder})" if holder else ""
        super().__init__(f"another build of {display_path(out)} is running{who}; nothing was changed. "
                         "Run the build again when it has finished")


@contextmanager
def output_lock(out: Path, *, wait: bool = True,
                on_wait: Callable[[int | None], None] | None = None) -> Iterator[OutputPlace]:
    """Hold the output's exclusive lock: one build (and its recovery) at a time per real output path."""
    place = output_place(out)
    place.state.mkdir(parents=True, exist_ok=True, mode=0o700)
    with ExitStack() as stack:
        try:
            stack.enter_context(exclusive_lock(place.state / "lock", wait=wait, on_wait=on_wait))
        except LockHeld as held:
            raise OutputBusy(out, held.holder) from None
        yield place



def recover(out: Path) -> bool:
    """Finish or undo a commit that was interrupted; True when there was one. The caller holds ``output_lock``."""
    return recover_place(output_place(out))




def _safe_unit(rel: object) -> bool:
    """A unit is a plain relative path below the output: no absolute path, no ``..``, ``.`` or empty part."""
    return (isinstance(rel, str) and bool(rel) and "\\" not in rel and "\0" not in rel
            and all(part not in ("", ".", "..") for part in rel.split("/")))


def _link_on_the_way(root: Path, rel: str, checked: set[Path]) -> Path | None:
    """The first symbolic link among ``root`` and the folders from it to ``rel``; moving a unit never goes
    through one. ``checked`` remembers folders already seen to be real (units share their parents)."""
    folder = root
    for part in ("", *rel.split("/")[:-1]):
        folder = folder / part if part else folder
        if folder in checked:
            continue
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(mode):
            return folder
        checked.add(folder)
    return None


def _checked_journal(place: OutputPlace) -> dict[str, Any] | None:
    """The journal of an interrupted commit, if any, after checking it names only what this machinery makes."""
    try:
        text = place.journal.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    problem = ""
    try:
        journal = json.loads(text)
    except ValueError:
        journal, problem = None, "is not JSON"
    if not problem and not (isinstance(journal, dict) and journal.get("version") == JOURNAL_VERSION
                            and journal.get("out") == str(place.base)
                            and journal.get("state") in ("prepared", "committed")
                            and isinstance(journal.get("units"), list)):
        problem = "is not a journal this builder wrote for this output"
    if not problem:
        assert isinstance(journal, dict)
        if not (place.owns(journal.get("tmp"), "tmp") and place.owns(journal.get("backup"), "backup")):
            problem = "names a temporary or backup folder the build does not make"
        elif not all(isinstance(u, dict) and _safe_unit(u.get("path")) and isinstance(u.get("had_old"), bool)
                     and isinstance(u.get("has_new"), bool) for u in journal["units"]):
            problem = "names a path that is not a plain relative path inside the output"
        else:
            checked: set[Path] = set()
            roots = [place.base] + [place.base.parent / journal[k] for k in ("tmp", "backup")]
            for unit in journal["units"]:
                link = next((found for root in roots if (found := _link_on_the_way(root, unit["path"], checked))),
                            None)
                if link is not None:
                    problem = f"would move files through the symbolic link {link}"
                    break
    if problem:
        raise BuildError(f"{place.journal}: {problem}; nothing was changed. It records an interrupted build of "
                         f"{display_path(place.out)}: check the output, then delete the journal to build again")
    assert isinstance(journal, dict)
    return journal


def recover_place(place: OutputPlace) -> bool:
    journal = _checked_journal(place)
    if journal is None:
        return False
    backup, tmp = place.base.parent / journal["backup"], place.base.parent / journal["tmp"]
    if journal["state"] != "committed":
        for unit in reversed(journal["units"]):
            rel, had_old, has_new = unit["path"], unit["had_old"], unit["has_new"]
            current, saved = place.base / rel, backup / rel
            if had_old and os.path.lexists(saved):
                remove_path(current)
                current.parent.mkdir(parents=True, exist_ok=True)
                os.rename(saved, current)
            elif not had_old and has_new and not os.path.lexists(tmp / rel):
                remove_path(current)
    remove_path(backup)
    remove_path(tmp)
    place.journal.unlink()
    return True




UNLISTED = b"*\n"  # a .gitignore that ignores its whole folder, itself included


def _unlisted(folder: Path) -> None:
    """Keep a folder of ours beside the output out of ``git status``: it may sit in a repository's work tree for
    the length of a build (or of a deletion), and must not read as something to commit."""
    with suppress(OSError):
        (folder / ".gitignore").write_bytes(UNLISTED)


def commit_units(tmp: Path, place: OutputPlace, units: list[str]) -> None:
    """Move each staged unit over its old self, keeping the old ones aside until every unit is in place."""
    out = place.base
    checked: set[Path] = set()
    for rel in units:
        if not _safe_unit(rel):
            raise BuildError(f"refusing to publish {rel!r}: not a plain relative path inside the output")
        link = _link_on_the_way(out, rel, checked) or _link_on_the_way(tmp, rel, checked)
        if link is not None:
            raise BuildError(f"{display_path(link)} is a symbolic link; the build never moves files through one. "
                             f"Nothing was changed: remove the link (or all of {display_path(place.out)}) and "
                             "build again")
    backup = place.fresh("backup")
    plan: list[dict[str, Any]] = [
        {"path": rel, "had_old": os.path.lexists(out / rel), "has_new": os.path.lexists(tmp / rel)}
        for rel in units]
    journal = {"version": JOURNAL_VERSION, "out": str(out), "tmp": tmp.name, "backup": backup.name, "units": plan,
               "state": "prepared"}
    write_atomic(place.journal, json.dumps(journal).encode("utf-8"))
    try:
        for unit in plan:
            rel = unit["path"]
            if unit["had_old"]:
                if not backup.exists():
                    backup.mkdir()
                    _unlisted(backup)
                (backup / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(out / rel, backup / rel)
            if unit["has_new"]:
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(tmp / rel, out / rel)
        journal["state"] = "committed"
        write_atomic(place.journal, json.dumps(journal).encode("utf-8"))
    except BaseException:
        recover_place(place)  # put every unit back as it was; a process killed here is recovered by the next build
        raise
    with suppress(OSError):  # the new output is in place; the next build's recovery removes what is left
        if backup.exists():
            discard(backup, place)
        place.journal.unlink()




def swap_output(tmp: Path, place: OutputPlace) -> None:
    """Put ``tmp`` at the output; an existing one is exchanged atomically where the OS allows, then discarded."""
    (tmp / ".gitignore").unlink(missing_ok=True)  # staging's, not the site's
    previous = swap_into(tmp, place.base, place.fresh("old"))
    if previous is None:
        return
    try:
        discard(previous, place)
    except OSError:
        if previous != tmp:  # after an exchange the caller deletes ``tmp`` (now the old output) itself
            remove_path(previous, ignore_errors=True)


@contextmanager
def staging(place: OutputPlace) -> Iterator[Path]:
    """A new staging folder beside the output, removed on leaving; recorded as trash first, so that the next build
    removes it if this process is killed."""
    tmp = place.fresh("tmp")
    record = place.trash_records / tmp.name
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.touch()
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        _unlisted(tmp)
        yield tmp
    finally:
        remove_path(tmp)
        record.unlink(missing_ok=True)


@contextmanager
def output_errors(place: OutputPlace, existed: bool) -> Iterator[None]:
    """An error writing the build's own folders leaves as one line about the output (``output_error``)."""
    try:
        yield
    except OSError as exc:
        mapped = output_error(exc, place, existed)
        if mapped is None:
            raise
        raise mapped from None


_DELETER = """import contextlib, os, shutil, sys
shutil.rmtree(sys.argv[1], True)
if not os.path.lexists(sys.argv[1]):
    with contextlib.suppress(OSError):
        os.unlink(sys.argv[2])
"""


def discard(folder: Path, place: OutputPlace) -> None:
    """Delete a replaced tree in a detached process: on a slow disk removing 100,000 files takes minutes, and
    nothing needs to wait for it. The trash folder is recorded first, so a deleter that dies leaves a record
    the next build finishes from; nothing else beside the output is ever deleted as trash."""
    trash = place.fresh("trash")
    record = place.trash_records / trash.name
    record.parent.mkdir(parents=True, exist_ok=True)
    record.touch()
    os.rename(folder, trash)
    _unlisted(trash)
    try:
        subprocess.Popen([sys.executable, "-c", _DELETER, str(trash), str(record)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        remove_path(trash, ignore_errors=True)
        record.unlink(missing_ok=True)


def _being_deleted(trash: Path) -> bool:
    """Whether a running process was started to delete ``trash`` (its path is on that process's command line)."""
    needle = os.fsencode(str(trash))
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def empty_trash(place: OutputPlace) -> None:
    """Remove the recorded folders a detached deletion or a killed build left, unless a deleter is at work on them."""
    try:
        records = list(os.scandir(place.trash_records))
    except FileNotFoundError:
        return
    for record in records:
        if not (place.owns(record.name, "trash") or place.owns(record.name, "tmp")):
            continue
        trash = place.base.parent / record.name
        if os.path.lexists(trash):
            if _being_deleted(trash):
                continue
            if trash.is_dir() and not trash.is_symlink():
                remove_path(trash, ignore_errors=True)
        if not os.path.lexists(trash) or trash.is_symlink() or not trash.is_dir():
            # Gone, or something other than the folder we made is there now: leave it. A detached deleter that
            # has just finished removes the same record, so it may be gone already.
            Path(record.path).unlink(missing_ok=True)


def output_error(exc: OSError, place: OutputPlace, existed: bool) -> BuildError | None:
    """An error writing the build's own folders, as one line about the output rather than a temporary file."""
    def ours(name: Any) -> bool:
        path = Path(os.fsdecode(name))
        first = path.relative_to(place.base.parent).parts[:1] if path.is_relative_to(place.base.parent) else ()
        return bool(first) and (first[0] == place.base.name or first[0].startswith(f".{place.base.name}."))

    names = [name for name in (exc.filename, exc.filename2) if name is not None]
    if names and not any(ours(name) for name in names):  # (no name at all: a write() into a staged file)
        return None
    what = os_error_message(OSError(exc.errno, exc.strerror, display_path(place.out)))
    return BuildError(f"{what} ({'the previous output is unchanged' if existed else 'nothing was written'})")


def check_output_folder(out: Path, config: RegistryConfig, skills: Sequence[Path] = ()) -> None:
    """Refuse an output folder that is, or holds, the registry's folder, its skills folder or a skill."""
    resolved = out.resolve()
    for protected in (config.root.resolve(), config.skills_path.resolve()):
        if resolved == protected or protected.is_relative_to(resolved):
            raise UsageError(f"--out {display_path(out)} would replace {display_path(protected)}; pick another folder")
    inside = str(resolved) + os.sep
    for folder in skills:
        text = str(folder)
        if text == str(resolved) or text.startswith(inside):
            raise UsageError(f"--out {display_path(out)} would replace the skill {display_path(folder)}; pick another "
                             "folder")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {display_path(out)} is a file")
    if out.is_dir() and any(out.iterdir()) and not (out / INDEX_PATH).is_file():
        raise UsageError(f"--out {display_path(out)} is not empty and holds no previous build; "
                         "refusing to replace it")




_MADE: set[Path] = set()  # folders this process created; on a slow disk even a failing mkdir costs


def forget_made_folders() -> None:
    """In a new worker: the folders of a staging folder this process has not made itself may be gone."""
    _MADE.clear()


def make_folder(folder: Path) -> None:
    if folder not in _MADE:
        folder.mkdir(parents=True, exist_ok=True)
        _MADE.add(folder)


def link_unchanged_documents(out: Path, tmp: Path, paths: Sequence[str]) -> None:
    """Link unchanged published documents the website reads into the staging folder; they are no units, so
    they go with it."""
    for rel in paths:
        make_folder((tmp / rel).parent)
        try:
            os.link(out / rel, tmp / rel)
        except OSError:
            shutil.copyfile(out / rel, tmp / rel)


def stage_file(root: Path, rel: str, data: bytes) -> Path:
    """Write a new file ``rel`` below the staging folder ``root`` (mode 0666 as the umask allows, as ``open``
    gives; through ``os.open``, which spares the three calls ``open`` adds to each of a build's many files)."""
    path = root / rel
    make_folder(path.parent)
    create_file(path, data, mode=0o666, sync=False)
    return path


def stage_content_named(tmp: Path, out: Path, files: dict[str, bytes], root: str, index: str, *,
                        whole: bool) -> list[str]:
    """Stage a document split into files named by their content's digest under ``root``, listed by ``index``:
    every file for a whole build, else only the index and the files the output lacks, with a unit removing each
    file under ``root`` no longer named. Returns the units."""
    have: set[str] = set()
    if not whole:
        for folder, _dirs, names in os.walk(out / root):
            rel = Path(folder).relative_to(out).as_posix()
            have.update(f"{rel}/{name}" for name in names)
    units = []
    for rel, data in files.items():
        if rel == index or rel not in have:
            stage_file(tmp, rel, data)
            units.append(rel)
    return units + sorted(have - set(files))
