"""The client's download cache: each registry's documents with their ETags, and its bundles, kept between runs
so an unchanged document costs one 304 and a verified bundle no request at all."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from ..core.errors import UsageError
from ..core.fs import write_atomic
from ..core.model import sha256_hex

DEFAULT_CACHE_MAX_MB = 512  # the download cache's size bound (SKILLREG_CACHE_MAX_MB)


def cache_root() -> Path:
    """``SKILLREG_CACHE_DIR``, else the platform's user cache folder."""
    override = os.environ.get("SKILLREG_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_cache_path("skillreg", appauthor=False)


@dataclass(frozen=True)
class CachedEntry:
    body: bytes
    etag: str | None
    fetched: str
    state: str | None = None  # a head.json: the digest of the state.json it was fetched (or revalidated) under


def cache_limit() -> int:
    """``SKILLREG_CACHE_MAX_MB`` (mebibytes) as bytes: what the download cache may hold before it evicts."""
    text = os.environ.get("SKILLREG_CACHE_MAX_MB")
    if not text:
        return DEFAULT_CACHE_MAX_MB * 1024 * 1024
    try:
        value = float(text)
    except ValueError:
        raise UsageError("SKILLREG_CACHE_MAX_MB must be a number of mebibytes") from None
    if value < 0:
        raise UsageError("SKILLREG_CACHE_MAX_MB must not be negative")
    return int(value * 1024 * 1024)


class DownloadCache:
    """One folder per registry root: ``<path>`` holds the body, ``<path>.meta.json`` its ETag and checksum.

    Safe for many processes at once: each file is replaced atomically and every body is checked against its
    checksum (and a bundle against its published sha256) when read, so a race costs a download, never wrong
    bytes. Reading an entry touches it; writing one evicts the least recently used entries of every registry
    until the cache is within ``cache_limit()``.
    """

    def __init__(self, root: Path, registry_url: str) -> None:
        host = re.sub(r"[^A-Za-z0-9.-]+", "_", urlsplit(registry_url).netloc)[:40] or "local"
        self.root = root / "registries"
        self.folder = self.root / f"{host}-{hashlib.sha256(registry_url.encode()).hexdigest()[:16]}"
        self.limit = cache_limit()
        # The whole cache's size as this object last counted it plus what it has written since (an upper bound
        # as long as no other process writes): only when that passes the limit is the cache walked again.
        self._total: int | None = None

    def _paths(self, path: str) -> tuple[Path, Path]:
        body = self.folder / path
        return body, body.with_name(body.name + ".meta.json")

    def get(self, path: str) -> CachedEntry | None:
        body_path, meta_path = self._paths(path)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            body = body_path.read_bytes()
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("sha256") != sha256_hex(body):
            return None
        try:
            os.utime(body_path)  # recently used: evicted last
        except OSError:
            pass
        state = meta.get("state")
        return CachedEntry(body, meta.get("etag"), str(meta.get("fetched", "?")),
                           state if isinstance(state, str) else None)

    def put(self, path: str, body: bytes, etag: str | None, state: str | None = None) -> None:
        body_path, meta_path = self._paths(path)
        fetched = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        meta = {"etag": etag, "fetched": fetched, "sha256": sha256_hex(body)}
        if state is not None:
            meta["state"] = state
        meta_bytes = json.dumps(meta, sort_keys=True).encode()
        try:
            # Not flushed to disk: every entry is checked against its checksum when read, so one lost in a power
            # cut is only fetched again (two fsyncs per file were most of a cold search query's time).
            write_atomic(body_path, body, durable=False)
            write_atomic(meta_path, meta_bytes, durable=False)
        except OSError:
            return  # the cache only saves requests; a read-only or full cache folder must not stop an install
        self._grew(len(body) + len(meta_bytes), body_path)

    def get_named(self, path: str, digest: str) -> bytes | None:
        """The cached body of a file whose name carries its content's digest (the search index's files), if its
        sha256 is ``digest`` (or, given the 12 digits of a name only, starts with it); such an entry has no
        ``.meta.json``: there is no ETag to keep."""
        body_path = self.folder / path
        try:
            body = body_path.read_bytes()
        except OSError:
            return None
        if not sha256_hex(body).startswith(digest):
            return None
        with contextlib.suppress(OSError):
            os.utime(body_path)
        return body

    def put_named(self, path: str, body: bytes) -> None:
        """Keep a file whose name carries its digest: one file, no metadata (checked against its name when read)."""
        body_path = self.folder / path
        try:
            write_atomic(body_path, body, durable=False)
        except OSError:
            return
        self._grew(len(body), body_path)

    def _grew(self, size: int, written: Path) -> None:
        """Count ``size`` more bytes; walk and evict only once the count may have passed the limit."""
        if self._total is not None:
            self._total += size
        if self._total is None or self._total > self.limit:
            self.evict(keep=written)

    def evict(self, keep: Path | None = None) -> None:
        """Delete least recently used entries until the whole cache fits its limit (``keep`` goes last)."""
        entries: list[tuple[float, int, Path]] = []
        total = 0
        for current, _, names in os.walk(self.root):
            for name in names:
                if name.endswith((".meta.json", ".tmp")):
                    continue
                body = Path(current, name)
                try:
                    st = body.stat()
                    size = st.st_size + _size(body.with_name(name + ".meta.json"))
                except OSError:
                    continue
                total += size
                entries.append((float("inf") if body == keep else st.st_mtime, size, body))
        self._total = total
        if total <= self.limit:
            return
        for _, size, body in sorted(entries, key=lambda e: (e[0], str(e[2]))):
            for path in (body.with_name(body.name + ".meta.json"), body):
                with contextlib.suppress(OSError):
                    path.unlink()
            total -= size
            self._total = total
            if total <= self.limit:
                return


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
