"""Reading a published registry from an https:// or loopback http:// URL, a file:// URL or a local build folder.

Paths inside the published documents are relative to the site root and are resolved against the registry
the user named, never against the absolute ``url`` fields (a mirror serves the same files elsewhere).
Over HTTP every document is cached with its ETag and revalidated with If-None-Match, so an unchanged
check costs one request answered 304; bundles are immutable (their names carry the digest), so a verified
cached bundle costs none. When the registry cannot be reached, a cached document is used with a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from .. import __version__
from ..core.errors import ClientError, UsageError
from ..core.fs import write_atomic
from ..core.loader import path_problems
from ..core.model import MAX_NAME, sha256_hex
from ..core.search import SEARCH_INDEX_PATH, SHARDS_INDEX_PATH, SHARDS_ROOT, SearchIndex
from ..core.urls import INDEX_PATH, STATE_PATH, detail_path, head_path
from .documents import DIGEST, MAX_DOCUMENT_BYTES, NAME, SHA256, document_limit, parse_json
from .lock_format import LOCK_FILE
from .search import ShardedSearch
from .transport import Deadline, DeadlineRequest, TooLarge, TooSlow, Transport, host_kind
from .transport import Unreachable as Unreachable  # defined beside the transport, so client/trust.py can catch it

DEFAULT_TIMEOUT = 30.0  # seconds for one whole request: connecting, the headers and the body
ATTEMPTS = 3  # one request and two retries, on 5xx, 429, timeouts and connection errors
BACKOFF = 0.25  # seconds before the first retry; doubled before each next one
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
DEFAULT_CACHE_MAX_MB = 512  # the download cache's size bound (SKILLREG_CACHE_MAX_MB)
CHUNK = 64 * 1024


_UNOPENED = object()  # the registry's verifier before its first use


class NotFound(ClientError):
    """The registry answered that a document does not exist (HTTP 404, or no such file)."""


def cache_root() -> Path:
    """``SKILLREG_CACHE_DIR``, else the platform's user cache folder."""
    override = os.environ.get("SKILLREG_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_cache_path("skillreg", appauthor=False)


def default_timeout() -> float:
    try:
        value = float(os.environ.get("SKILLREG_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        raise UsageError("SKILLREG_TIMEOUT must be a number of seconds") from None
    return value if value > 0 else DEFAULT_TIMEOUT


def require_skill_name(name: str) -> str:
    """``name`` when it is one a registry can publish; a UsageError naming it otherwise (a name from the user)."""
    if not (isinstance(name, str) and 0 < len(name) <= MAX_NAME and NAME.match(name)):
        raise UsageError(f"{name!r} is not a skill name (lowercase letters, digits and single hyphens)")
    return name


def check_site_path(path: object, what: str) -> str:
    """A path from a published document: relative, inside the site, no tricks."""
    if not isinstance(path, str) or not path or "\\" in path or path_problems(path) or \
            any(part in ("", ".") for part in path.split("/")):
        raise ClientError(f"the registry published an unsafe {what} path {path!r}; refusing it")
    return path


def normalize_location(location: str) -> tuple[str, Path | None]:
    """(registry root URL ending in '/', local folder or None) for what a user typed."""
    text = location.strip()
    for suffix in (INDEX_PATH, "index.json"):
        if text.endswith("/" + suffix):
            text = text[: -len(suffix)]
            break
    if "://" not in text:
        folder = Path(text).expanduser().resolve()
        return folder.as_uri().rstrip("/") + "/", folder
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise UsageError(f"{location}: only local file:// URLs are supported")
        folder = Path(unquote(parts.path)).resolve()
        return folder.as_uri().rstrip("/") + "/", folder
    if scheme not in ("http", "https"):
        raise UsageError(f"{location}: the registry must be an https:// URL, a file:// URL or a folder")
    if scheme == "http" and host_kind(parts.hostname or "") != "loopback":
        raise UsageError(f"{location}: plain http:// is allowed only for 127.0.0.1 and localhost; use https://")
    if parts.query or parts.fragment:
        raise UsageError(f"{location}: a registry URL has no query or fragment")
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return f"{scheme}://{parts.netloc}{path}", None


def no_registry_here(folder: Path) -> str:
    """Why a folder given as the registry is not one, and what to give instead: a registry's checkout holds
    registry.yaml and, once built, its site/ (the default output)."""
    from ..core.loader import display_path

    shown = display_path(folder)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        return f"{shown} {what}; --registry takes a registry's URL or the folder its build wrote"
    missing = f"{shown} holds no published registry (no {INDEX_PATH})"
    if (folder / "registry.yaml").is_file():
        if (folder / "site" / INDEX_PATH).is_file():
            return f"{missing}; it is a registry's checkout, whose build is in site/: --registry {shown}/site"
        return (f"{missing}; it is a registry's checkout that was never built: run `skillreg build` there, "
                f"then use --registry {shown}/site")
    return f"{missing}; --registry takes a registry's URL or the folder its build wrote"


def check_lock_registry(url: str) -> str:
    """``url``, a registry read from a lock file, if the client may use it unasked: a lock is data from the
    checkout, so one naming this machine, a local network or a folder would make a clone send requests there."""
    try:
        root, folder = normalize_location(url)
    except UsageError as exc:
        raise ClientError(f"{LOCK_FILE} names the registry {url!r}, which is not usable ({exc})") from None
    kind = "a folder" if folder is not None else host_kind(urlsplit(root).hostname or "")
    where = {"a folder": "a folder on this machine", "loopback": "on this machine",
             "private": "on a local network"}.get(kind)
    if where is not None:
        raise ClientError(f"{LOCK_FILE} names the registry {url}, {where}; a registry from a lock file is used only "
                          f"when it is public. To use it, name it: --registry {url}")
    return url


@dataclass(frozen=True)
class _Cached:
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


class _Cache:
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

    def get(self, path: str) -> _Cached | None:
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
        return _Cached(body, meta.get("etag"), str(meta.get("fetched", "?")), state if isinstance(state, str) else None)

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


@dataclass(frozen=True)
class _Response:
    status: int  # 200 or 304
    body: bytes
    etag: str | None


class Registry:
    """One registry root. Counts the HTTP requests it sends (``requests``) so tests and benchmarks can check them."""

    def __init__(self, location: str, *, cache_dir: Path | None = None, timeout: float | None = None,
                 warn: Callable[[str], None] | None = None, attempts: int = ATTEMPTS,
                 backoff: float = BACKOFF) -> None:
        self.url, self.folder = normalize_location(location)
        self.timeout = timeout if timeout is not None else default_timeout()
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.requests = 0
        self.warnings: list[str] = []
        self._warn = warn
        self._cache = _Cache(cache_dir or cache_root(), self.url) if self.folder is None else None
        # Search files by (path, the sha256 they were checked against): content-addressed, never stale in a process.
        self._search_files: dict[tuple[str, str | None], dict[str, Any]] = {}
        host = urlsplit(self.url).hostname or ""
        # Loopback never goes through a proxy configured for the outside world.
        handlers: list[urllib.request.BaseHandler] = [Transport(self.url)]
        if host_kind(host) == "loopback":
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)
        self.expected_root: tuple[str, int] | None = None  # the root a lock entry trusts (sha256, version), if any
        self._verifier: Any = _UNOPENED
        self._opening = False  # while the verifier opens (it reads through this registry)

    def _open_verifier(self) -> None:
        if self._verifier is _UNOPENED and not self._opening:
            from .trust import open_verifier

            self._opening = True
            try:
                self._verifier = open_verifier(self, self.expected_root)
            finally:
                self._opening = False

    def _verified(self, path: str, data: bytes) -> bytes:
        """``data`` if the registry's signed metadata covers it (client/trust.py); as it is for an unsigned one."""
        self._open_verifier()
        if self._verifier is not None:
            self._verifier.check(path, data)
        return data

    @property
    def signed(self) -> bool:
        return self._verifier is not _UNOPENED and self._verifier is not None

    def raw(self, path: str, max_bytes: int) -> bytes | None:
        """The bytes at ``path`` (None: not published), unchecked and uncached, for the verifier, which checks
        them itself."""
        check_site_path(path, "document")
        try:
            if self.folder is not None:
                return self._read_local(path, max_bytes + 1)
            return self._get(self._url(path), None, max_bytes + 1).body
        except NotFound:
            return None

    def kept(self, path: str, max_bytes: int) -> bytes | None:
        """The bytes at ``path`` through the document cache (revalidated by ETag; the cached copy when the registry
        cannot be reached), unchecked: for the verifier, which checks them against the signed metadata itself."""
        check_site_path(path, "document")
        try:
            return self._document_bytes(path, limit=max_bytes)
        except NotFound:
            return None

    @property
    def offline(self) -> bool:
        """Whether the registry's signed metadata could only be verified from the trust store (it did not answer)."""
        return self.signed and self._verifier.offline is not None

    def __repr__(self) -> str:
        return f"Registry({self.url!r})"

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        if self._warn is not None:
            self._warn(message)

    # -- documents ---------------------------------------------------------------------------------------

    def document(self, path: str) -> dict[str, Any]:
        data = self._verified(path, self._document_bytes(check_site_path(path, "document")))
        doc = parse_json(data, f"{self.url}{path}")
        if not isinstance(doc, dict):
            raise ClientError(f"{self.url}{path} is not a JSON object")
        return doc

    def index(self) -> dict[str, Any]:
        from .schemas import check_index

        doc = self.document(INDEX_PATH)
        if not isinstance(doc.get("skills"), list):
            raise ClientError(f"{self.url}{INDEX_PATH} lists no skills; is this a skill registry?")
        check_index(doc, f"{self.url}{INDEX_PATH}")
        return doc

    def state(self) -> dict[str, Any] | None:
        """state.json (one request, 304 when no skill's latest changed), or None for a registry built before it."""
        from .schemas import check_document

        try:
            doc = self.document(STATE_PATH)
        except NotFound:
            return None
        check_document(doc, "state", f"{self.url}{STATE_PATH}")
        if doc.get("api_version") != 1 or not isinstance(doc.get("count"), int) \
                or not DIGEST.match(str(doc.get("digest", ""))):
            raise ClientError(f"{self.url}{STATE_PATH} is not a registry state (api_version 1, count, digest); "
                              "refusing it")
        return doc

    def head(self, name: str, state: str | None) -> dict[str, Any] | None:
        """NAME's head.json, or None when the registry publishes none for it. ``state`` is the digest of the
        state.json just read: a cached head.json fetched under the same state is current without a request
        (state.json covers every skill's latest), any other is revalidated with If-None-Match."""
        require_skill_name(name)
        path = head_path(name)
        cached = self._cache.get(path) if self._cache is not None and state is not None else None
        try:
            data = cached.body if cached is not None and cached.state == state else \
                self._document_bytes(path, state=state)
        except NotFound:
            return None
        from .schemas import check_document

        doc = parse_json(self._verified(path, data), f"{self.url}{path}")
        if isinstance(doc, dict):
            check_document(doc, "head", f"{self.url}{path}")
        if not isinstance(doc, dict) or doc.get("name") != name or doc.get("api_version") != 1 or any(
                doc.get(key) is not None and not DIGEST.match(str(doc[key])) for key in ("digest", "latest")):
            raise ClientError(f"{self.url}{path} is not the head document of {name!r}; refusing it")
        return doc

    def search_index(self) -> dict[str, Any]:
        doc = self.document(SEARCH_INDEX_PATH)
        rows = doc.get("skills")
        if not isinstance(rows, list):
            raise ClientError(f"{self.url}{SEARCH_INDEX_PATH} is not a search index")
        for number, row in enumerate(rows, 1):
            if not (isinstance(row, list) and len(row) >= 5 and all(isinstance(row[i], str) for i in (0, 1, 2, 4))
                    and isinstance(row[3], list) and all(isinstance(tag, str) for tag in row[3])):
                raise ClientError(f"{self.url}{SEARCH_INDEX_PATH}: row {number:,} is not [name, description, "
                                  "category, tags, headings]; refusing the index")
        return doc

    def search(self) -> ShardedSearch | SearchIndex:
        """The registry's search: the sharded index, of which a query fetches only the files it needs (as the
        website does); a registry published before it has only the whole index, read as before."""
        from .schemas import check_search_manifest

        try:
            manifest = self.document(SHARDS_INDEX_PATH)
        except NotFound:
            return SearchIndex(self.search_index())
        check_search_manifest(manifest, f"{self.url}{SHARDS_INDEX_PATH}")
        return ShardedSearch(manifest, self.search_file, where=f"{self.url}{SHARDS_INDEX_PATH}")

    def search_file(self, path: str, sha256: str | None = None) -> dict[str, Any]:
        """One file of the sharded search index, whose bytes must hash to ``sha256``, the full digest the index
        gives it (None: an index of version 2, which gives only the 12 digits in the file's name, and then those
        are checked). A cached copy that matches is used without a request; bytes that do not are refused."""
        check_site_path(path, "search file")
        named = re.fullmatch(r"(?:[a-z0-9]{1,3}\.)?([0-9a-f]{12})\.json", path.rpartition("/")[2])
        digest = named.group(1) if named and path.startswith(f"{SHARDS_ROOT}/") else ""
        if not digest:
            raise ClientError(f"{self.url}{path} is not a file of the sharded search index; refusing it")
        if sha256 is None and self.signed:
            raise ClientError(f"{self.url}{path}: the signed search index gives no sha256 for it; refusing it")
        if sha256 is not None and not SHA256.match(sha256):
            raise ClientError(f"{self.url}{path}: {sha256!r} is not a sha256; refusing the search index")
        if (path, sha256) in self._search_files:
            return self._search_files[(path, sha256)]
        expected = sha256 or digest
        cached = self._cache.get_named(path, expected) if self._cache is not None else None
        if cached is not None:
            data = cached
        else:
            data = (self._read_local(path, MAX_DOCUMENT_BYTES + 1) if self.folder is not None
                    else self._get(self._url(path), None, MAX_DOCUMENT_BYTES + 1).body)
            if not sha256_hex(data).startswith(expected):
                raise ClientError(f"{self.url}{path}: the download does not match "
                                  f"{'the sha256 the search index gives it' if sha256 else 'the digest in its name'};"
                                  " refusing the search index")
            if self._cache is not None:
                self._cache.put_named(path, data)
        doc = parse_json(data, f"{self.url}{path}")
        if not isinstance(doc, dict):
            raise ClientError(f"{self.url}{path} is not a JSON object")
        self._search_files[(path, sha256)] = doc
        return doc

    def detail(self, name: str) -> dict[str, Any]:
        from .schemas import check_document

        require_skill_name(name)
        try:
            doc = self.document(detail_path(name))
        except NotFound:
            raise NotFound(f"no skill named {name!r} in {self.url}{self.suggestion(name)}") from None
        check_document(doc, "detail", f"{self.url}{detail_path(name)}")
        if doc.get("name") != name or not DIGEST.match(str(doc.get("digest", ""))):
            raise ClientError(f"{self.url}{detail_path(name)} does not describe {name!r}; refusing it")
        zip_bundle = (doc.get("bundles") or {}).get("zip") or {}
        check_site_path(zip_bundle.get("path"), "bundle")
        if not SHA256.match(str(zip_bundle.get("sha256", ""))) or not isinstance(zip_bundle.get("size"), int):
            raise ClientError(f"{self.url}{detail_path(name)} gives no sha256 and size for its bundle; refusing it")
        return doc

    def suggestion(self, name: str) -> str:
        """"; did you mean X?" from the index's names, for a name the registry does not publish (one request,
        made only after a miss); empty when the index cannot be read either."""
        from ..core.suggest import did_you_mean

        try:
            skills = self.index()["skills"]
        except ClientError:
            return ""
        return did_you_mean(name, [str(s.get("name")) for s in skills if isinstance(s, dict)])

    # -- immutable artifacts -------------------------------------------------------------------------------

    def artifact(self, path: str, sha256: str, size: int | None) -> bytes:
        """The bytes of a published file whose sha256 (and size, where the document gives one: a discovery index
        does not) is known; nothing else is ever returned."""
        check_site_path(path, "artifact")
        if size is not None and size > MAX_ARTIFACT_BYTES:
            raise ClientError(f"{path} is {size:,} bytes; the client accepts at most {MAX_ARTIFACT_BYTES:,}")
        limit = (size if size is not None else MAX_ARTIFACT_BYTES) + 1
        if self.folder is not None:
            data = self._read_local(path, limit)
        else:
            assert self._cache is not None
            cached = self._cache.get(path)
            if cached is not None and sha256_hex(cached.body) == sha256:
                return self._verified(path, cached.body)
            data = self._get(self._url(path), None, limit).body
        if (size is not None and len(data) != size) or len(data) >= limit or sha256_hex(data) != sha256:
            expected = f" and {size:,} bytes" if size is not None else ""
            raise ClientError(f"{self.url}{path}: the download does not match the published sha256 "
                              f"(expected {sha256[:12]}…{expected}, got {sha256_hex(data)[:12]}… and "
                              f"{len(data):,} bytes); nothing was installed")
        self._verified(path, data)
        if self._cache is not None:
            self._cache.put(path, data, None)
        return data

    # -- transport -------------------------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return self.url + quote(path, safe="/")

    def _read_local(self, path: str, limit: int) -> bytes:
        assert self.folder is not None
        target = self.folder / path
        try:
            if not target.resolve().is_relative_to(self.folder.resolve()):
                raise ClientError(f"{target} leaves the registry folder; refusing it")
            with open(target, "rb") as fh:
                data = fh.read(limit)
        except FileNotFoundError:
            if not (self.folder / INDEX_PATH).is_file():
                raise ClientError(no_registry_here(self.folder)) from None
            raise NotFound(f"{target}: no such file in the registry") from None
        except IsADirectoryError:
            raise NotFound(f"{target} is a folder, not a published file") from None
        except OSError as exc:
            raise ClientError(f"cannot read {target}: {exc.strerror}") from None
        if len(data) >= limit:
            raise TooLarge(f"{target} is larger than the client accepts ({limit - 1:,} bytes)")
        return data

    def _document_bytes(self, path: str, *, state: str | None = None, limit: int | None = None) -> bytes:
        limit = (limit if limit is not None else document_limit(path)) + 1
        if self.folder is not None:
            return self._read_local(path, limit)
        assert self._cache is not None
        cached = self._cache.get(path)
        if cached is not None and self.offline:  # said once, by the verifier; every cached copy is verified
            return cached.body
        url = self._url(path)
        try:
            response = self._get(url, cached.etag if cached else None, limit)
        except Unreachable as exc:
            if cached is None:
                raise
            self._open_verifier()
            if self.offline:  # a signed registry: the verifier said it works offline, and checks every copy
                return cached.body
            self.warn(f"{exc}; working offline with the copy of {path} cached {cached.fetched}")
            return cached.body
        if response.status == 304:
            if cached is None:  # we sent no validator; a 304 makes no sense
                raise ClientError(f"{url}: the server answered 304 Not Modified to an unconditional request")
            if state is not None and cached.state != state:
                self._cache.put(path, cached.body, cached.etag, state)  # current under this state too
            return cached.body
        self._cache.put(path, response.body, response.etag, state)
        return response.body

    def _get(self, url: str, etag: str | None, limit: int) -> _Response:
        headers = {"User-Agent": f"skillreg/{__version__}", "Accept-Encoding": "identity"}
        if etag:
            headers["If-None-Match"] = etag
        problem = "no answer"
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            self.requests += 1
            request = DeadlineRequest(url, headers=headers)
            request.deadline = deadline = Deadline(self.timeout)
            try:
                with deadline, self._opener.open(request, timeout=self.timeout) as resp:
                    body = self._read_body(resp, limit, url, deadline)
                    return _Response(200, body, resp.headers.get("ETag"))
            except TooSlow as exc:  # it answered, but too slowly to finish: another try would do no better
                raise Unreachable(f"cannot fetch {url}: {exc.received:,} bytes arrived within the "
                                  f"{self.timeout:g} s a request may take (SKILLREG_TIMEOUT); giving up") from None
            except urllib.error.HTTPError as exc:
                exc.close()
                if exc.code == 304:
                    return _Response(304, b"", exc.headers.get("ETag"))
                if exc.code == 404 or exc.code == 410:
                    raise NotFound(f"{url}: not found (HTTP {exc.code})") from None
                if exc.code < 500 and exc.code != 429:
                    raise ClientError(f"{url}: the server refused the request (HTTP {exc.code} {exc.reason})") from None
                problem = f"HTTP {exc.code} {exc.reason}"
            except urllib.error.URLError as exc:
                problem = _describe(TimeoutError() if deadline.expired else exc.reason, self.timeout)
            except (OSError, http.client.HTTPException) as exc:
                problem = _describe(TimeoutError() if deadline.expired else exc, self.timeout)
        raise Unreachable(f"cannot fetch {url}: {problem} (tried {self.attempts} times)")

    def _read_body(self, resp: http.client.HTTPResponse, limit: int, url: str, deadline: Deadline) -> bytes:
        declared = resp.headers.get("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) >= limit:
            raise TooLarge(f"{url}: the response is {int(declared):,} bytes, larger than the {limit - 1:,} "
                              "expected; refusing it")
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = resp.read1(CHUNK)
            except (OSError, http.client.HTTPException):
                if deadline.expired:
                    raise TooSlow(total) from None
                raise
            if not chunk:
                break
            total += len(chunk)
            if total >= limit:
                raise TooLarge(f"{url}: the response is larger than the {limit - 1:,} bytes expected; refusing it")
            chunks.append(chunk)
        if deadline.expired:
            raise TooSlow(total)
        if declared is not None and declared.isdigit() and int(declared) != total:
            raise http.client.IncompleteRead(b"", int(declared) - total)
        return b"".join(chunks)


def _describe(reason: object, timeout: float) -> str:
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return f"no answer within {timeout:g} s"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, http.client.IncompleteRead):
        return f"the connection closed {reason.expected:,} bytes early"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(reason, socket.gaierror):
        return "unknown host"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__
