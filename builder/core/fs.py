"""Writing files so that a reader never sees half of one: temp file or folder, flush, then rename."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from .errors import UsageError

STATE_ENV = "SKILLREG_STATE_DIR"
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def state_dir() -> Path:
    """Where skillreg keeps the records it trusts (locks, journals, trash lists, manifests): ``SKILLREG_STATE_DIR``,
    else the user's state folder. Never in a checkout or an output, so nothing a pull request commits can pose as
    one."""
    override = os.environ.get(STATE_ENV)
    if override:
        return Path(override)
    import platformdirs

    return platformdirs.user_state_path("skillreg", appauthor=False)


def create_file(path: Path, data: bytes, *, mode: int = 0o644, exact_mode: bool = False, sync: bool = True) -> None:
    """Create ``path`` holding ``data``, with ``mode`` as the umask allows (``exact_mode``: as given, whatever the
    umask), flushed to disk unless ``sync=False``.

    Never replaces anything and never follows a link: FileExistsError when the name is taken. A failed write
    leaves the file as far as it got, for the caller to delete with the rest of its staging.
    """
    fd = os.open(path, _NEW_FILE, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if exact_mode:
            os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def sync_path(path: Path, *, ignore_errors: bool = False) -> None:
    """Flush ``path``, an existing file or folder, to disk (a folder's entries: a rename into it then survives a
    power cut). ``ignore_errors``: a file system that cannot open or flush it is left as it is."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        if ignore_errors:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not ignore_errors:
            raise
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, *, executable: bool = False, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` in one step, mode 0644 (0755 when ``executable``) as the umask allows.

    ``durable=False`` skips the flush to disk before the rename: readers still see the old file or the new one,
    never a part, but a power cut may lose the new bytes. Only for files that are checked when read and can be
    fetched again (the client's download cache). An error names ``path``, not the temporary file beside it,
    which is gone by the time anyone reads it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        # The umask applies, as creating the file in place would; mkstemp would give 0600.
        create_file(tmp, data, mode=0o755 if executable else 0o644, sync=durable)
        os.replace(tmp, path)
    except BaseException as exc:
        if not isinstance(exc, FileExistsError):  # a file of that name was there before: not ours to delete
            with suppress(OSError):
                tmp.unlink()
        if isinstance(exc, OSError) and exc.filename in (None, str(tmp), tmp):  # write() errors name no file
            raise OSError(exc.errno, exc.strerror, str(path)) from None
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
            create_file(target, data, mode=0o755 if executable else 0o644, sync=False)
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
    return bool(renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0)


class LockHeld(Exception):
    """``exclusive_lock(wait=False)`` found the lock taken; ``holder`` is that process's id when known."""

    def __init__(self, path: Path, holder: int | None) -> None:
        super().__init__(f"{path}: held by {'process ' + str(holder) if holder else 'another process'}")
        self.path = path
        self.holder = holder


_HELD: set[int] = set()  # descriptors of the locks this process holds


def _forget_held_locks() -> None:
    """In a forked child (a worker process): drop the copies of the parent's lock descriptors. A flock belongs
    to the open file, so a worker that outlives a killed parent would otherwise keep the lock taken."""
    for fd in _HELD:
        with suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_held_locks)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> int | None:
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def acquire_flock(fd: int, *, patience: float = 1.0, on_wait: Callable[[], None] | None = None) -> None:
    """Take the exclusive ``flock`` on ``fd``, waiting as long as it takes; ``on_wait()`` is called once after
    ``patience`` seconds, so a caller can say why nothing happens. The one lock wait of every skillreg lock."""
    deadline = time.monotonic() + patience
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
            return
        time.sleep(0.02)


@contextmanager
def exclusive_lock(path: Path, *, wait: bool = True, on_wait: Callable[[int | None], None] | None = None,
                   patience: float = 1.0, mode: int = 0o644, folder_mode: int = 0o777) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` for the with-block; ``path`` is created (``mode``, in a folder made
    ``folder_mode``), never followed as a link.

    The kernel drops the lock when its holder exits, killed or not, so a stale lock never blocks. When the
    lock is taken: raise ``LockHeld`` at once (``wait=False``), or wait, calling ``on_wait(holder pid)`` once
    after ``patience`` seconds so a caller can say why nothing happens.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=folder_mode)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                     mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path}: is a symbolic link; a lock file is never followed: delete the link") from None
        raise
    try:
        if not _try_lock(fd):
            if not wait:
                raise LockHeld(path, _holder(fd))
            acquire_flock(fd, patience=patience, on_wait=None if on_wait is None else lambda: on_wait(_holder(fd)))
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        _HELD.add(fd)
        yield
    finally:
        _HELD.discard(fd)
        os.close(fd)


def remove_path(path: Path, *, ignore_errors: bool = False) -> None:
    """Delete ``path``, a folder with everything in it; a symbolic link is removed itself, never followed.
    ``ignore_errors``: leave what cannot be deleted (a folder only; unlinking a file still reports)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=ignore_errors)
    elif os.path.lexists(path):
        path.unlink(missing_ok=True)


def swap_into(new: Path, target: Path, aside: Path) -> Path | None:
    """Put the folder ``new`` at ``target`` and return where the one it replaced is now (``new`` itself after an
    atomic exchange, else ``aside``, moved there first), or None when there was none. The caller deletes it."""
    if not os.path.lexists(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(new, target)
        return None
    if exchange(new, target):
        return new
    os.rename(target, aside)
    os.rename(new, target)
    return aside
