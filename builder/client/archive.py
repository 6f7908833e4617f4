"""Reading a downloaded zip bundle into memory, refusing anything a skill bundle never contains.

Refused: absolute paths, ``..``, empty or ``.`` components, backslashes, control characters, links, device
and other special entries, duplicate entries (also those differing only in case), encrypted entries, and
archives past the size caps. Sizes are checked as declared and counted again while decompressing, so a
header that lies about its size is caught too. Nothing here touches the file system.
"""

from __future__ import annotations

import io
import stat
import zipfile
from dataclasses import dataclass

from ..core.errors import ClientError
from ..core.limits import CLIENT, LIMITS
from ..core.loader import path_problems
from ..core.model import SkillFile


class UnsafeBundle(ClientError):
    """The bundle holds something that must not be unpacked; nothing was written."""


@dataclass(frozen=True)
class UnpackLimits:
    """What a bundle may hold; the defaults are the client's column of the shared table (``core.limits``)."""

    max_files: int = CLIENT.max_entries
    max_file_bytes: int = CLIENT.max_file_bytes
    max_total_bytes: int = CLIENT.max_total_bytes
    # A deflated entry larger than any file a registry may publish that expands more than this many times is a
    # bomb, not a skill file (a published file, however well it compresses, is never taken for one).
    max_ratio: int = 200


_SPECIAL = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a named pipe",
            stat.S_IFSOCK: "a socket"}


def _entry_problem(name: str, mode: int) -> str | None:
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        return f"entry {name!r} is a symbolic link"
    if kind in _SPECIAL:
        return f"entry {name!r} is {_SPECIAL[kind]}"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"entry {name!r} has an unknown file type {oct(kind)}"
    if "\\" in name:
        return f"entry {name!r} contains a backslash"
    problems = path_problems(name.rstrip("/"))
    if problems:
        return f"entry {problems[0][1]}"
    if any(part in ("", ".") for part in name.rstrip("/").split("/")):
        return f"entry {name!r} has an empty or `.` path component"
    return None


DEFAULT_LIMITS = UnpackLimits()
_PUBLISHABLE_FILE_BYTES = LIMITS["max_file_bytes"].ceiling or CLIENT.max_file_bytes


def read_bundle(data: bytes, limits: UnpackLimits = DEFAULT_LIMITS) -> list[SkillFile]:
    """The files of a zip bundle, sorted by path; raises ``UnsafeBundle`` at the first thing refused."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise UnsafeBundle(f"the bundle is not a readable zip archive ({exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_files:
            raise UnsafeBundle(f"the bundle has {len(infos):,} entries; the limit is {limits.max_files:,}")
        seen: dict[str, str] = {}
        wanted: list[tuple[zipfile.ZipInfo, bool]] = []
        declared_total = 0
        for info in infos:
            name = info.filename
            mode = (info.external_attr >> 16) if info.create_system == 3 else 0
            if info.orig_filename != name:  # zipfile cut the name at a NUL byte or rewrote its separators
                raise UnsafeBundle(f"entry {info.orig_filename!r} is not a plain relative path")
            problem = _entry_problem(name, mode)
            if problem:
                raise UnsafeBundle(problem)
            folded = name.rstrip("/").casefold()
            if folded in seen:
                raise UnsafeBundle(f"entry {name!r} appears twice in the bundle"
                                   + ("" if seen[folded] == name else f" (as {seen[folded]!r})"))
            seen[folded] = name
            if info.is_dir() or stat.S_ISDIR(mode):
                continue
            if info.flag_bits & 0x1:
                raise UnsafeBundle(f"entry {name!r} is encrypted")
            if info.file_size > limits.max_file_bytes:
                raise UnsafeBundle(f"entry {name!r} unpacks to {info.file_size:,} bytes; "
                                   f"the limit per file is {limits.max_file_bytes:,}")
            ratio_limit = limits.max_ratio * max(info.compress_size, 1)
            if info.file_size > _PUBLISHABLE_FILE_BYTES and info.file_size > ratio_limit:
                raise UnsafeBundle(f"entry {name!r} expands {info.file_size // max(info.compress_size, 1):,} times "
                                   "(a zip bomb?)")
            declared_total += info.file_size
            if declared_total > limits.max_total_bytes:
                raise UnsafeBundle(f"the bundle unpacks to more than {limits.max_total_bytes:,} bytes")
            wanted.append((info, bool(mode & 0o111)))
        files: list[SkillFile] = []
        total = 0
        for info, executable in wanted:
            cap = min(info.file_size, limits.max_file_bytes)
            chunks: list[bytes] = []
            size = 0
            try:
                with archive.open(info) as fh:
                    while True:
                        chunk = fh.read(64 * 1024)
                        if not chunk:
                            break
                        size += len(chunk)
                        total += len(chunk)
                        if size > cap or total > limits.max_total_bytes:
                            raise UnsafeBundle(f"entry {info.filename!r} unpacks to more bytes than it declares")
                        chunks.append(chunk)
            except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, OSError) as exc:
                raise UnsafeBundle(f"entry {info.filename!r} cannot be read ({exc})") from None
            files.append(SkillFile(info.filename, b"".join(chunks), executable))
    files.sort(key=lambda f: f.path.encode("utf-8"))
    return files
