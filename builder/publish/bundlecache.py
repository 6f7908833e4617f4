"""The bundle cache: old versions' zips kept between builds, believed only as far as git's own ids vouch for them.

A zip is filed under the key of the snapshot it was packed from (``Snapshot.key``: its file list of paths, modes
and blob ids, which pins every byte). Before a cached zip is reused, ``bundle_members`` checks that it is exactly
a bundle of that file list, as ``zip_bytes`` lays one out: the same paths in the same order, the same modes, no
byte outside the entries, and each file's git blob id (``sha1("blob <size>\\0" + bytes)``) equal to the one in the
list. Everything a version says about itself (digest, version, rules) is then derived from those checked bytes,
never read from the cache, so a stale, damaged or planted cache costs the time to pack again, never bytes.

The cache must live outside the repository's work tree and the output (``check_cache_place``): a pull request
can commit any file into the work tree.
"""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from ..core.bundle import ZIP_EPOCH, bundle_order
from ..core.config import Limits
from ..core.errors import UsageError
from ..core.fs import write_atomic
from ..core.loader import display_path
from ..core.model import SkillFile

# Bump when what a cached zip means changes (the zip writer, the key), so no zip of another meaning is found.
CACHE_FORMAT = 2
_MODES = {"100644": False, "100755": True}  # git modes of files a bundle holds -> executable
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_CENTRAL_END = 22  # the end-of-central-directory record, without a comment


def git_blob_id(data: bytes, like: str) -> str:
    """git's id of a blob holding ``data``, in the hash of the id ``like`` (SHA-1, or SHA-256 repositories)."""
    digest = hashlib.sha1() if len(like) == 40 else hashlib.sha256()
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def bundle_members(data: bytes, entries: Sequence[tuple[str, str, str]], limits: Limits) -> dict[str, bytes] | None:
    """The files of a cached zip by blob id, when the zip is exactly a bundle of ``entries`` (path, mode, blob id);
    else None. Every byte of the archive is accounted for, so no reader of it can find other content, and nothing
    is inflated past the size limits."""
    wanted = {path: (oid, _MODES[mode]) for path, mode, oid in entries if mode in _MODES}
    order = [f.path for f in bundle_order(SkillFile(path, b"") for path in wanted)]
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if [i.filename for i in infos] != order or archive.comment:
                return None
            if (any(i.file_size > limits.max_file_bytes for i in infos)
                    or sum(i.file_size for i in infos) > limits.max_skill_bytes):
                return None
            found: dict[str, bytes] = {}
            offset = 0
            for info in infos:
                oid, executable = wanted[info.filename]
                if info.header_offset != offset or not _plain(info, executable):
                    return None
                name = info.filename.encode("utf-8")
                local = _LOCAL_HEADER.unpack_from(data, offset)
                if local != (b"PK\x03\x04", info.extract_version, 0, info.flag_bits, info.compress_type,
                             *_dos_time(), info.CRC, info.compress_size, info.file_size, len(name), 0) \
                        or data[offset + _LOCAL_HEADER.size:offset + _LOCAL_HEADER.size + len(name)] != name:
                    return None
                content = archive.read(info)  # checks the CRC
                if git_blob_id(content, oid) != oid:
                    return None
                found[oid] = content
                offset += _LOCAL_HEADER.size + len(name) + info.compress_size
            directory = data[offset:len(data) - _CENTRAL_END]
            central = sum(46 + len(i.filename.encode("utf-8")) for i in infos)
            if len(directory) != central or data[len(data) - _CENTRAL_END:][:4] != b"PK\x05\x06":
                return None  # bytes between the last entry and its central directory, or after the archive
            return found
    except (zipfile.BadZipFile, zipfile.LargeZipFile, KeyError, ValueError, struct.error, OSError, EOFError):
        return None


def _plain(info: zipfile.ZipInfo, executable: bool) -> bool:
    """The entry is as ``zip_bytes`` writes one: deflated, fixed time, Unix mode, no extra field or comment."""
    utf8 = 0x800 if not info.filename.isascii() else 0
    mode = 0o100755 if executable else 0o100644
    return (info.compress_type == zipfile.ZIP_DEFLATED and info.date_time == ZIP_EPOCH and info.create_system == 3
            and info.external_attr == mode << 16 and not info.extra and not info.comment
            and info.flag_bits == utf8 and info.extract_version == 20 and info.volume == 0 and info.internal_attr == 0)


def _dos_time() -> tuple[int, int]:
    year, month, day, hour, minute, second = ZIP_EPOCH
    return (hour << 11 | minute << 5 | second // 2), ((year - 1980) << 9 | month << 5 | day)


class BundleCache:
    """Zips of old versions by snapshot key, in a folder outside the checkout that may be stale or tampered with."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def _path(self, key: str) -> Path | None:
        if self.root is None:
            return None
        name = hashlib.sha256(f"{CACHE_FORMAT}\0{key}".encode()).hexdigest()
        return self.root / "zips" / name[:2] / f"{name}.zip"

    def zip(self, key: str, most: int) -> bytes | None:
        """The cached zip of the snapshot with ``key``, if there is one of at most ``most`` bytes; not yet checked."""
        path = self._path(key)
        if path is None:
            return None
        try:
            with path.open("rb") as fh:
                data = fh.read(most + 1)
        except OSError:
            return None
        return data if len(data) <= most else None

    def put_zip(self, key: str, data: bytes) -> None:
        """Atomic (a reader sees the old file or the new one) but not flushed to the disk: a file a crash leaves
        short fails its check and is made again, so the cache never costs an fsync."""
        path = self._path(key)
        if path is None:
            return
        with suppress(OSError):  # the cache only saves time
            write_atomic(path, data, durable=False)


def check_cache_place(cache: Path, work_tree: Path | None, out: Path) -> None:
    """Refuse a bundle cache inside the repository's work tree or the output: anything a pull request commits, or
    a previous output holds, would be read as cache."""
    where = cache.resolve()
    for root, what in ((work_tree, "the repository's work tree"), (out, "the output folder")):
        if root is not None and where.is_relative_to(root.resolve()):
            raise UsageError(f"bundle cache {display_path(cache)} is inside {what} {root.resolve()}; files "
                             "committed there would be read as cache. Keep it outside (the Pages workflow uses "
                             "$RUNNER_TEMP/bundle-cache)")
