"""Reading a published registry from an https:// or loopback http:// URL, a file:// URL or a local build folder.

Paths inside the published documents are relative to the site root and are resolved against the registry
the user named, never against the absolute ``url`` fields (a mirror serves the same files elsewhere).
Over HTTP every document is cached with its ETag and revalidated with If-None-Match, so an unchanged
check costs one request answered 304; bundles are immutable (their names carry the digest), so a verified
cached bundle costs none. When the registry cannot be reached, a cached document is used with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..core.errors import ClientError
from ..core.model import sha256_hex
from ..core.search import SEARCH_INDEX_PATH, SHARDS_INDEX_PATH, SHARDS_ROOT, SearchIndex
from ..core.urls import INDEX_PATH, STATE_PATH, detail_path, head_path
from .cache import DownloadCache, cache_root
from .documents import DIGEST, MAX_DOCUMENT_BYTES, SHA256, document_limit, parse_json, value_limit
from .fetch import ATTEMPTS, BACKOFF, Session, default_timeout
from .locations import check_site_path, no_registry_here, normalize_location, require_skill_name
from .search import ShardedSearch
from .transport import NotFound, TooLarge, Unreachable

if TYPE_CHECKING:
    from .root_pin import RootPin

MAX_ARTIFACT_BYTES = 64 * 1024 * 1024

_UNOPENED = object()  # the registry's verifier before its first use


class NoRegistry(NotFound):
    """The location serves no registry of ours at all (no index.json): a wrong URL, not a missing skill. Still a
    NotFound, so readers that fall back to another registry's discovery index do so."""


class Registry:
    """One registry root. Counts the HTTP requests it sends (``requests``) so tests and benchmarks can check them.

    ``public_only``: the registry comes from a lock file (data from a checkout), so every address its connections
    land on, the registry's own host's included, must be public."""

    def __init__(self, location: str, *, cache_dir: Path | None = None, timeout: float | None = None,
                 warn: Callable[[str], None] | None = None, attempts: int = ATTEMPTS,
                 backoff: float = BACKOFF, public_only: bool = False) -> None:
        self.location = location
        self.url, self.folder = normalize_location(location)
        self._http = Session(self.url, timeout=timeout if timeout is not None else default_timeout(),
                             attempts=attempts, backoff=backoff, public_only=public_only)
        self.warnings: list[str] = []
        self._warn = warn
        self._cache = DownloadCache(cache_dir or cache_root(), self.url) if self.folder is None else None
        # Search files by (path, the sha256 they were checked against): content-addressed, never stale in a process.
        self._search_files: dict[tuple[str, str | None], dict[str, Any]] = {}
        self.pinned: RootPin | None = None  # the root the lock pins for this registry (client/pins.py), if any
        self._verifier: Any = _UNOPENED
        self._opening = False  # while the verifier opens (it reads through this registry)

    def _open_verifier(self) -> None:
        if self._verifier is _UNOPENED and not self._opening:
            from .trust import open_verifier

            self._opening = True
            try:
                self._verifier = open_verifier(self, self.pinned)
            finally:
                self._opening = False

    def pin(self, root: RootPin) -> None:
        """Bind this registry to ``root``: it must be signed, its chain of roots starting from that root. A second,
        different root is refused; a verifier opened before the pin was known is opened again under it."""
        if self.pinned is not None:
            if self.pinned.sha256 != root.sha256:
                raise ClientError(f"{self.url}: {self.pinned.described} pins {self.pinned.shown} and "
                                  f"{root.described} pins {root.shown} for this registry; nothing was installed or "
                                  f"changed. Pin the right one: `{root.command(self.url)} FILE` (the registry's "
                                  "trust/N.root.json)")
            return
        self.pinned = root
        if self._verifier is not _UNOPENED and getattr(self._verifier, "root", ("",))[0] != root.sha256:
            self._verifier = _UNOPENED
            self._search_files.clear()  # checked under the verifier that is gone

    @property
    def trust_root(self) -> tuple[str, int] | None:
        """The root this registry's verified chain starts from (sha256, version), as a lock entry records it; None
        for an unsigned registry (or one not read yet)."""
        return self._verifier.root if self.signed else None

    def _verified(self, path: str, data: bytes) -> bytes:
        """``data`` if the registry's signed metadata covers it (client/trust.py); as it is for an unsigned one."""
        self._open_verifier()
        if self._verifier is not None:
            self._verifier.check(path, data)
        return data

    @property
    def requests(self) -> int:
        return self._http.requests

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
            return self._http.get(self._url(path), None, max_bytes + 1).body
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
        try:
            data = self._verified(path, self._document_bytes(check_site_path(path, "document")))
        except NotFound:
            if path != INDEX_PATH:
                raise
            raise NoRegistry(f"no skill registry at {self.url}: it has no {INDEX_PATH} (HTTP 404); check the "
                             "registry's URL, which is where its build was published") from None
        doc = parse_json(data, f"{self.url}{path}", value_limit(path))
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
        try:
            doc = self.document(SEARCH_INDEX_PATH)
        except NotFound:
            self.index()  # no registry at all reads as that, not as a missing search file
            raise
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
                    else self._http.get(self._url(path), None, MAX_DOCUMENT_BYTES + 1).body)
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
        except NoRegistry:
            raise
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
            data = self._http.get(self._url(path), None, limit).body
        if (size is not None and len(data) != size) or len(data) >= limit or sha256_hex(data) != sha256:
            expected = f" and {size:,} bytes" if size is not None else ""
            raise ClientError(f"{self.url}{path}: the download does not match the published sha256 "
                              f"(expected {sha256[:12]}…{expected}, got {sha256_hex(data)[:12]}… and "
                              f"{len(data):,} bytes); nothing was installed")
        self._verified(path, data)
        if self._cache is not None:
            self._cache.put(path, data, None)
        return data

    # -- reading ---------------------------------------------------------------------------------------------

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
                raise ClientError(no_registry_here(self.folder, self.location)) from None
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
            response = self._http.get(url, cached.etag if cached else None, limit)
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
