"""Change detection: which skill folders changed since the last build, without reading a file.

A folder's signature covers the size, modification and change times and inode of the folder and of every entry
below it, as git's index does (``survey``). A rebuild states again only the paths the last build listed, one stat
per path and no folder listing (``restat``); a registry of many folders compares them in worker processes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from ..core.workers import collect_as_usual, default_jobs, run_parallel

# Above this many folders a rebuild compares their signatures in worker processes: at 60,000 skills the stat
# calls are most of what a rebuild after one change does.
PARALLEL_SIGNATURES = 20_000
SIGNATURE_CHUNK = 1_000


Item = tuple[str, str, str, tuple[str, ...]]  # a folder, its entries, its signature, the paths in it git ignores


def _changed_in(task: tuple[int, Sequence[Item]]) -> list[int]:
    start, items = task
    return [start + n for n, (folder, entries, sig, ignored) in enumerate(items)
            if signed(restat(folder, entries), ignored) != sig]


def changed_folders(items: Sequence[Item], jobs: int | None) -> set[int]:
    """The positions of the (folder, entries, signature, ignored) whose folder's ``restat``, ``signed`` with its
    ignored paths, is not the signature."""
    workers = (jobs if jobs is not None else default_jobs(len(items))) if len(items) >= PARALLEL_SIGNATURES else 1
    if workers <= 1:
        return set(_changed_in((0, items)))
    chunks = [(start, items[start:start + SIGNATURE_CHUNK]) for start in range(0, len(items), SIGNATURE_CHUNK)]
    done = run_parallel(_changed_in, chunks, initializer=collect_as_usual, initargs=(), jobs=workers)
    return {n for chunk in done for n in chunk}


def stat_line(rel: str, st: os.stat_result) -> str:
    # The change time too: content written back with the old size and modification time still moves it.
    return f"{rel}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_ctime_ns}"


def _digest_lines(lines: list[str]) -> str:
    lines.sort()
    return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def survey(folder: Path | str) -> tuple[str, str]:
    """The folder's signature, which changes when any file or folder in it changes (path, type, size,
    modification and change time, inode of the folder and of every entry below it), and the entries it
    covers, one relative path a line ("\0" when they cannot be stated again by ``restat``: an unreadable or
    vanishing entry, a name with a newline or not in UTF-8)."""
    signature, entries, _ = survey_sized(folder)
    return signature, entries


def survey_sized(folder: Path | str) -> tuple[str, str, int]:
    """``survey`` and the bytes of the files it listed, which the host-size projection reads (``host_fit``)."""
    root = os.fspath(folder)
    lines: list[str] = []
    entries: list[str] = []
    total = 0
    exact = True
    try:
        lines.append(stat_line("", os.stat(root, follow_symlinks=False)))
    except OSError:
        lines.append("gone:")
        exact = False
    stack = [(root, "")]
    while stack:
        current, prefix = stack.pop()
        try:
            found = list(os.scandir(current))
        except OSError:
            lines.append(f"unreadable:{prefix}")
            exact = False
            continue
        for entry in found:
            rel = f"{prefix}{entry.name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                lines.append(f"gone:{rel}")
                exact = False
                continue
            lines.append(stat_line(rel, st))
            entries.append(rel)
            if stat.S_ISDIR(st.st_mode):
                stack.append((entry.path, f"{rel}/"))
            elif stat.S_ISREG(st.st_mode):
                total += st.st_size
    entries.sort()
    listed = "\n".join(entries)
    exact = exact and "\n" not in "".join(entries) and _utf8(listed)
    return _digest_lines(lines), listed if exact else "\0", total


def signed(signature: str, ignored: Sequence[str]) -> str:
    """A folder's signature that also changes when the paths git ignores in it do (a ``.gitignore`` edited
    outside the folder changes what it publishes without touching a file in it)."""
    if not signature or not ignored:
        return signature
    return hashlib.sha1("\n".join([signature, *sorted(ignored)]).encode("utf-8", "surrogateescape")).hexdigest()


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True



def restat(folder: str, entries: str) -> str:
    """``survey(folder)``'s signature while no folder in it has gained, lost or renamed an entry since ``survey`` listed
    ``entries``, else a different value: such a change moves the times of the folder holding the entry, whose
    own line is part of the signature. One stat per path, no listing of folders; "" when a path is gone."""
    return restat_sized(folder, entries)[0]


def restat_sized(folder: str, entries: str) -> tuple[str, int]:
    """``restat`` and the bytes of the files among ``entries`` (exact while the signature is ``survey``'s)."""
    if "\0" in entries:
        return "", 0
    lines = []
    total = 0
    for rel in ("", *entries.split("\n")) if entries else ("",):
        try:
            st = os.stat(f"{folder}/{rel}" if rel else folder, follow_symlinks=False)
        except (OSError, ValueError):
            return "", 0
        lines.append(stat_line(rel, st))
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
    return _digest_lines(lines), total
