"""Writing files so that a reader never sees half of one: temp file or folder, flush, then rename."""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from pathlib import Path

from .errors import UsageError


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_new_folder(folder: Path, files: dict[str, tuple[bytes, bool]]) -> None:
    """Create ``folder`` with ``files`` (path -> (bytes, executable)); refuse to replace anything."""
    if folder.exists() or folder.is_symlink():
        raise UsageError(f"{folder}: already exists; refusing to overwrite it")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for rel, (data, executable) in files.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(target, flags, 0o755 if executable else 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        os.rename(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step with Linux's renameat2(RENAME_EXCHANGE); False where unavailable."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0
