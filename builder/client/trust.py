"""Verifying a signed registry through python-tuf's client, over our own transport.

When a registry publishes TUF metadata (api/v1/tuf/), every document and bundle the client uses is checked: a
registry-wide document against the top-level targets, a skill's files against that skill's signed digests.json.
The first contact trusts the registry's first root and says so, unless the user gives one (``--trust-root``); the
trusted metadata is kept in the state folder, keyed by the registry's URL, so a registry once seen signed that
answers unsigned is refused. A root the project's lock pins (client/pins.py) binds: the registry must be signed and
its chain must start from that root, whatever the trust store holds or --trust-root says; a disagreement is refused
and only `skillreg trust pin` (``reset_store``) resolves it. python-tuf does every check of the metadata; this
module only maps its refusals to one line a user can act on.

When the registry cannot be reached (refused, timed out, unknown host; never a bad signature, a 404 or stale
metadata, which are refusals), the client works offline like an unsigned one does, where that is safe: python-tuf
checks the metadata kept in the trust store as if it had been served again, so it is used only while it has not
expired, and only cached files it covers are accepted.
"""

from __future__ import annotations

from ..signing import lean_tuf  # noqa: F401  (first: python-tuf without boto3)

# isort: split

import datetime as dt
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from tuf.api import exceptions
from tuf.api.metadata import Snapshot, TargetFile, Targets, Timestamp
from tuf.ngclient import Updater, UpdaterConfig
from tuf.ngclient.fetcher import FetcherInterface

from ..core.errors import ClientError, UsageError
from ..core.fs import remove_path, state_dir, swap_into, write_atomic
from ..core.model import sha256_hex
from ..core.urls import API_ROOT, SKILLS_MANIFEST_PATH, SKILLS_MANIFEST_ROOT
from .documents import json_shape_problem, parse_json
from .root_pin import RootPin
from .transport import TooLarge, Unreachable


class Registry(Protocol):
    """What the verifier needs of client/registry.py's Registry (which imports this module)."""

    url: str

    def raw(self, path: str, max_bytes: int) -> bytes | None: ...

    def kept(self, path: str, max_bytes: int) -> bytes | None: ...

    def warn(self, message: str) -> None: ...

TUF_DIR = f"{API_ROOT}/tuf"
FIRST_ROOT = f"{TUF_DIR}/1.root.json"
TRUST_ROOT_ENV = "SKILLREG_TRUST_ROOT"
UNSIGNED_NAME = "unsigned"
VERIFIED_NAME = "verified"  # touched whenever the registry's metadata was refreshed online: the offline "as of"
UNSIGNED_RECHECK = 3600.0  # seconds
MAX_METADATA_BYTES = 5_000_000  # python-tuf's own bound on a targets file
_SKILL_FILE = re.compile(r"^(?:api/v1/skills/([a-z0-9-]+)(?:\.json|/.+)|api/v1/bundles/([a-z0-9-]+)/.+|"
                         r"\.well-known/skills/([a-z0-9-]+)/.+)$")


class TrustRefused(ClientError):
    """The registry's signed metadata or a file it covers did not verify."""


class _RegistryFetcher(FetcherInterface):
    """python-tuf's downloads through the registry's own transport: its deadlines, size caps and redirect rules."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.unreachable: Unreachable | None = None  # set when the registry did not answer: offline, not refused

    def _fetch(self, url: str) -> Iterator[bytes]:
        if not url.startswith(self.registry.url):
            raise exceptions.DownloadError(f"{url} is outside the registry")
        try:
            data = self.registry.raw(url[len(self.registry.url):], MAX_METADATA_BYTES)
        except Unreachable as exc:  # raised while python-tuf iterates, where it wraps nothing: wrap it here
            self.unreachable = exc
            raise exceptions.DownloadError(str(exc)) from exc
        if data is None:
            raise exceptions.DownloadHTTPError(f"{url}: not found", 404)
        _check_shape(url, data)
        yield data


def _check_shape(url: str, data: bytes) -> None:
    """python-tuf parses metadata with ``json.loads``: refuse first what would cost more than any real file."""
    problem = json_shape_problem(data)
    if problem:
        raise exceptions.DownloadError(f"{url}: {problem}; refusing it")


class _StoreFetcher(FetcherInterface):
    """Offline: the trust store's own copies, served as if by the registry, so python-tuf checks them all again
    (signatures, versions, expiry). No newer root exists; a file the store lacks cannot be had."""

    def __init__(self, store: Path, base_url: str) -> None:
        self.store = store
        self.base_url = base_url

    def _fetch(self, url: str) -> Iterator[bytes]:
        name = url[len(self.base_url):] if url.startswith(self.base_url) else ""
        if name.endswith(".root.json"):
            raise exceptions.DownloadHTTPError(f"{url}: offline, no newer root", 404)
        role = name if name == "timestamp.json" else name.partition(".")[2]
        try:
            yield (self.store / role).read_bytes() if role and "/" not in role else b""
        except OSError:
            raise exceptions.DownloadError(f"{url}: not among the signed metadata kept here") from None


def store_folder(registry_url: str) -> Path:
    """The user's trust store entry of one registry: python-tuf's trusted metadata, keyed by the URL."""
    host = re.sub(r"[^A-Za-z0-9.-]+", "_", registry_url.split("://", 1)[-1].split("/", 1)[0])[:40] or "local"
    return state_dir() / "trust" / f"{host}-{hashlib.sha256(registry_url.encode()).hexdigest()[:16]}"


def _record(store: Path) -> tuple[str, int] | None:
    """The sha256 and version of the root this trust store was started from (the registry's first root, trusted
    on first use, or the one pinned), if recorded."""
    try:
        record = json.loads((store / "registry.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    root = record.get("first_root") if isinstance(record, dict) else None
    version = record.get("root_version", 1) if isinstance(record, dict) else 1
    if not isinstance(root, str) or isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return None
    return root, version


def store_root(registry_url: str) -> tuple[str, int] | None:
    """The root this machine's trust store for ``registry_url`` starts from (sha256, version); None when it holds
    none. A store without its record (kept by an older client) is taken to start from the root it trusts now."""
    store = store_folder(registry_url)
    try:
        current = (store / "root.json").read_bytes()
    except OSError:
        return None
    return _record(store) or (sha256_hex(current), root_version(current) or 1)


def store_disagrees(registry_url: str, pin: RootPin) -> tuple[str, str] | None:
    """(what disagrees, the command that resolves it) when this machine's trust store for ``registry_url`` holds
    a root whose chain does not start from or pass through ``pin``; None when it agrees or holds none."""
    store = store_folder(registry_url)
    held = store_root(registry_url)
    if held is None or _passes_through(store, pin):
        return None
    return (f"{pin.described} pins {pin.shown}, but this machine's trust store holds root sha256 {held[0][:12]}… "
            f"(version {held[1]}) for it, trusted earlier (a first use may have met a hostile network)",
            f"If {pin.source} is right, run `{pin.command(registry_url)}` to start this machine's trust from its root")


def _passes_through(store: Path, pin: RootPin) -> bool:
    """Whether the chain of roots this trust store verified starts from ``pin`` or passes through it (python-tuf
    keeps every root it verified in root_history/): then every root it trusts now descends from the pinned one."""
    if (_record(store) or ("", 0))[0] == pin.sha256:
        return True
    try:
        return sha256_hex((store / "root_history" / f"{pin.version}.root.json").read_bytes()) == pin.sha256
    except OSError:
        return False


class Verifier:
    """One refreshed view of a registry's signed metadata; ``check`` refuses any bytes it does not cover."""

    def __init__(self, registry: Registry, updater: Updater, root: tuple[str, int],
                 offline: str | None = None) -> None:
        self.registry = registry
        self.updater = updater
        self.root = root  # the root the chain was verified from (sha256, version): what a lock entry records
        self.offline = offline  # why the registry could not be reached, when working from the trust store
        self._digests: dict[str, dict[str, Any]] = {}
        self._manifest: bytes | None = None  # the skill manifest's bytes, once they verified
        self._shards: dict[str, tuple[str, int]] | None = None

    def check(self, path: str, data: bytes) -> None:
        match = _SKILL_FILE.match(path)
        name = next((g for g in match.groups() if g), None) if match else None
        if name is not None and path != f"{API_ROOT}/skills/{name}/digests.json":
            entry = self._skill_files(name).get(path)
            if not isinstance(entry, dict) or entry.get("sha256") != sha256_hex(data) \
                    or entry.get("length") != len(data):
                raise self._tampered(path, f"its signed digests.json of {name} does not list these bytes")
            return
        if path.startswith(f"{SKILLS_MANIFEST_ROOT}/"):
            if self._manifest_shards().get(path) != (sha256_hex(data), len(data)):
                raise self._tampered(path, f"the signed {SKILLS_MANIFEST_PATH} does not list these bytes")
            return
        info = self._target(path)
        try:
            info.verify_length_and_hashes(data)
        except exceptions.LengthOrHashMismatchError:
            raise self._tampered(path, "it does not match its signed length and sha256") from None
        if path == SKILLS_MANIFEST_PATH:
            self._manifest = data  # verified: the shards it names are covered by it

    def _target(self, path: str) -> TargetFile:
        try:
            info = self.updater.get_targetinfo(path)
        except (exceptions.RepositoryError, exceptions.DownloadError) as exc:
            if self.offline is not None:
                raise self._not_offline(path, "the signed metadata kept here does not cover it") from None
            raise refusal(self.registry, exc) from None
        if info is None:
            raise self._tampered(path, "it is not among the registry's signed files")
        return info

    def _signed_document(self, path: str, data: bytes | None = None) -> Any:
        """The signed target ``path``, fetched through the document cache unless its verified ``data`` is given,
        checked against its signed length and sha256, parsed."""
        info = self._target(path)
        if data is None:
            try:
                data = self.registry.kept(path, info.length + 1) or b""
            except TooLarge:
                raise self._tampered(path, "it is larger than its signed length") from None
        try:
            info.verify_length_and_hashes(data)
        except exceptions.LengthOrHashMismatchError:
            raise self._tampered(path, "it does not match its signed length and sha256") from None
        return parse_json(data, f"{self.registry.url}{path}")

    def _skill_files(self, name: str) -> dict[str, Any]:
        if name not in self._digests:
            doc = self._signed_document(f"{API_ROOT}/skills/{name}/digests.json")
            files = doc.get("files") if isinstance(doc, dict) and doc.get("name") == name else None
            self._digests[name] = files if isinstance(files, dict) else {}
        return self._digests[name]

    def _manifest_shards(self) -> dict[str, tuple[str, int]]:
        """Each shard of the skill manifest by path, with the sha256 and length the signed manifest gives it: a
        shard is covered by the manifest that names it, as a skill's files by its digests.json."""
        if self._shards is None:
            doc = self._signed_document(SKILLS_MANIFEST_PATH, self._manifest)
            listed = doc.get("shards") if isinstance(doc, dict) else None
            self._shards = {str(s.get("path")): (str(s.get("sha256")), s["size"])
                            for s in (listed if isinstance(listed, list) else ())
                            if isinstance(s, dict) and isinstance(s.get("size"), int)}
        return self._shards

    def _tampered(self, path: str, why: str) -> TrustRefused:
        if self.offline is not None:
            return self._not_offline(path, f"the copy cached here does not verify ({why})")
        return TrustRefused(f"{self.registry.url}{path} was tampered with: {why}; nothing was installed or "
                            "changed. Tell the registry's maintainer; a mirror or cache may be serving altered files")


    def _not_offline(self, path: str, why: str) -> TrustRefused:
        return TrustRefused(f"{self.registry.url}{path}: cannot be verified offline ({self.offline}), as {why}; "
                            "nothing was installed or changed. Try again when the registry can be reached")


def refusal(registry: Registry, exc: Exception) -> TrustRefused:
    """One line for a refusal of python-tuf's: what was wrong and what to do."""
    where = f"{registry.url}{TUF_DIR}/"
    unchanged = "nothing was installed or changed"
    if isinstance(exc, exceptions.ExpiredMetadataError) and (root := _expired_root(registry)) is not None:
        return TrustRefused(f"{where}{root[0]}: the registry's root expired on {root[1]} ({exc}); {unchanged}. "
                            "Only its maintainer can renew it, with the offline root key: `skillreg trust "
                            "renew-root` signs a new root version, which a signed build then publishes; tell them")
    if isinstance(exc, exceptions.ExpiredMetadataError):
        when = _expiry_of(registry)
        return TrustRefused(f"{where}: the registry's signed metadata expired{' on ' + when if when else ''} "
                            f"({exc}); {unchanged}. The registry may be frozen by whoever serves it; tell its "
                            "maintainer, who refreshes it with `skillreg trust refresh`")
    if isinstance(exc, exceptions.BadVersionNumberError):
        return TrustRefused(f"{where}: the registry serves metadata older than already seen here ({exc}): a "
                            f"rollback; {unchanged}. Try again later or tell the registry's maintainer")
    if isinstance(exc, exceptions.UnsignedMetadataError):
        return TrustRefused(f"{where}: metadata not signed by the keys this client trusts ({exc}): an unknown "
                            f"key; {unchanged}. If the maintainer really changed keys, get the new root file from "
                            f"them and pin it: `skillreg trust pin {registry.url} FILE`")
    if isinstance(exc, exceptions.DownloadHTTPError) and exc.status_code == 404:
        return TrustRefused(f"{where}: the registry was signed when this client last used it and now publishes "
                            f"no signed metadata ({exc}): a downgrade; {unchanged}. Tell the registry's maintainer")
    if isinstance(exc, exceptions.LengthOrHashMismatchError):
        return TrustRefused(f"{where}: signed metadata was tampered with ({exc}); {unchanged}")
    return TrustRefused(f"{where}: the signed metadata does not verify ({type(exc).__name__}: {exc}); {unchanged}")


def _expiry_of(registry: Registry) -> str:
    try:
        doc = json.loads(registry.raw(f"{TUF_DIR}/timestamp.json", 16385) or b"")
        return str(doc["signed"]["expires"])
    except Exception:  # noqa: BLE001 - only for the message
        return ""


def _expired_root(registry: Registry) -> tuple[str, str] | None:
    """The file name and expiry of the newest root the trust store holds for ``registry``, when it has expired
    (python-tuf keeps every root it verified in root_history/, and refuses a registry whose newest has)."""
    try:
        history = store_folder(registry.url) / "root_history"
        version = max(int(path.name.split(".", 1)[0]) for path in history.glob("*.root.json"))
        expires = json.loads((history / f"{version}.root.json").read_bytes())["signed"]["expires"]
        if dt.datetime.fromisoformat(expires) > dt.datetime.now(dt.UTC):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return f"{version}.root.json", str(expires)


def _given_root() -> tuple[bytes, RootPin] | None:
    """The root file given with --trust-root, if any, and the pin it makes."""
    given = os.environ.get(TRUST_ROOT_ENV)
    if not given:
        return None
    try:
        data = Path(given).read_bytes()
    except OSError as exc:
        raise UsageError(f"{given}: cannot read the root to trust ({exc.strerror})") from None
    return data, RootPin(sha256_hex(data), root_version(data) or 1, f"--trust-root {given}", file=given)


def open_verifier(registry: Registry, pinned: RootPin | None = None) -> Verifier | None:
    """The verifier of ``registry``, or None when it publishes no signed metadata, none was seen before and no root
    is pinned for it.

    ``pinned``: the root the lock pins for the registry (client/pins.py). It binds: the registry must be signed and
    its chain of roots must start from that root. --trust-root naming another root, or a trust store whose chain
    does not start from or pass through it, is refused; so is a registry that answers without that root file, or
    with other bytes under its name. --trust-root binds the same way when the lock pins nothing."""
    store = store_folder(registry.url)
    given = _given_root()
    if given is not None and pinned is not None and given[1].sha256 != pinned.sha256:
        raise TrustRefused(f"{registry.url}: {given[1].source} is {given[1].shown}, but {pinned.described} pins "
                           f"{pinned.shown} for it; nothing was installed or changed. To pin the given root "
                           f"instead, run `{replace(given[1], global_=pinned.global_).command(registry.url)}`")
    binding = pinned or (given[1] if given is not None else None)
    held = store_root(registry.url)
    if held is not None:
        disagreement = store_disagrees(registry.url, binding) if binding is not None else None
        if disagreement is not None:
            raise TrustRefused(f"{registry.url}: {disagreement[0]}; nothing was installed or changed. "
                               f"{disagreement[1]}")
        return _verifier_of(registry, store, None, (binding.sha256, binding.version) if binding else held)
    bootstrap: bytes | None
    if given is not None:
        bootstrap = given[0]
    else:
        if pinned is None and _recently_unsigned(store):
            return None
        try:
            bootstrap = _served_root(registry, store, pinned)
        except Unreachable:
            if pinned is None and (store / UNSIGNED_NAME).is_file():
                return None  # unsigned when last asked, and never seen signed: go on as it was, offline
            raise
        if bootstrap is None:
            return None
    root = (sha256_hex(bootstrap), root_version(bootstrap) or 1)
    verifier = _verifier_of(registry, store, bootstrap, root)
    record = {"url": registry.url, "first_root": root[0], "root_version": root[1]}
    write_atomic(store / "registry.json", json.dumps(record, sort_keys=True).encode())
    return verifier


def _served_root(registry: Registry, store: Path, pinned: RootPin | None) -> bytes | None:
    """The root to start from, as the registry serves it: the version and bytes the lock pins, else the first
    root, trusted on first use and said so (None: the registry publishes no signed metadata)."""
    path = f"{TUF_DIR}/{pinned.version}.root.json" if pinned is not None else FIRST_ROOT
    bootstrap = registry.raw(path, 512_001)
    if bootstrap is not None and (problem := json_shape_problem(bootstrap)):
        raise TrustRefused(f"{registry.url}{path}: {problem}; refusing it; nothing was installed or changed")
    if bootstrap is None:
        if pinned is not None:
            raise TrustRefused(f"{registry.url}{path}: {pinned.described} pins {pinned.shown} for this registry, and "
                               "it now publishes no signed metadata (not found): a downgrade; nothing was installed "
                               "or changed. Tell the registry's maintainer; a host or mirror may be serving "
                               "unsigned files")
        _remember_unsigned(store)
        return None
    if pinned is not None and sha256_hex(bootstrap) != pinned.sha256:
        raise TrustRefused(f"{registry.url}{path} is not the root the lock trusts ({pinned.shown}, pinned by "
                           f"{pinned.described}); nothing was installed or changed")
    if pinned is None:
        registry.warn(f"trusting the signing keys of {registry.url} on first use (root sha256 "
                      f"{sha256_hex(bootstrap)[:12]}…); pass --trust-root FILE to pin them instead")
    return bootstrap


def root_version(data: bytes) -> int | None:
    """The version a root file says it is (python-tuf checks it when it loads the root); None when it has none."""
    try:
        version = json.loads(data)["signed"]["version"]
    except (ValueError, KeyError, TypeError):
        return None
    return version if isinstance(version, int) and not isinstance(version, bool) and version >= 1 else None


def read_root(path: Path) -> tuple[bytes, tuple[str, int]]:
    """The root metadata in ``path`` and its (sha256, version), refused unless it is a root signed by its own keys
    (what python-tuf requires of a root it starts from)."""
    from tuf.api.metadata import Metadata, Root

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the root to pin ({exc.strerror})") from None
    try:
        metadata = Metadata[Root].from_bytes(data)
        metadata.signed.verify_delegate(Root.type, metadata.signed_bytes, metadata.signatures)
    except Exception as exc:  # noqa: BLE001 - python-tuf raises several kinds for a bad file; one line for all
        raise UsageError(f"{path} is not the root metadata of a signed registry, signed by its own root keys "
                         f"({type(exc).__name__}: {exc}); give the registry's trust/N.root.json") from None
    return data, (sha256_hex(data), metadata.signed.version)


def reset_store(registry_url: str, root: bytes | None) -> None:
    """Forget what this machine trusts for ``registry_url``; with ``root``, start its trust store from that root
    (python-tuf persists it as it persists a root it bootstraps from), so the next use verifies from it."""
    store = store_folder(registry_url)
    if root is None:
        remove_path(store)
        return
    fresh = store.with_name(f"{store.name}.new-{os.getpid()}")
    remove_path(fresh)
    fresh.mkdir(parents=True)
    try:
        Updater(metadata_dir=str(fresh), metadata_base_url=registry_url + TUF_DIR + "/", target_base_url=registry_url,
                fetcher=_StoreFetcher(fresh, registry_url + TUF_DIR + "/"), bootstrap=root)
        record = {"url": registry_url, "first_root": sha256_hex(root), "root_version": root_version(root) or 1}
        write_atomic(fresh / "registry.json", json.dumps(record, sort_keys=True).encode())
        aside = swap_into(fresh, store, store.with_name(f"{store.name}.old-{os.getpid()}"))
    except BaseException:
        remove_path(fresh, ignore_errors=True)
        raise
    if aside is not None:
        remove_path(aside, ignore_errors=True)


def _recently_unsigned(store: Path) -> bool:
    """Whether the registry published no signed metadata when last probed, less than UNSIGNED_RECHECK ago: an
    unsigned registry then costs no request per command (one that starts signing is seen within the hour)."""
    try:
        return time.time() - (store / UNSIGNED_NAME).stat().st_mtime < UNSIGNED_RECHECK
    except OSError:
        return False


def _remember_unsigned(store: Path) -> None:
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    _mark(store, UNSIGNED_NAME)  # only saves a request


def _verifier_of(registry: Registry, store: Path, bootstrap: bytes | None, root: tuple[str, int]) -> Verifier:
    """The verifier over freshly refreshed metadata; offline, over the trust store's, if that still verifies."""
    store.mkdir(parents=True, exist_ok=True)
    fetcher = _RegistryFetcher(registry)
    before = _top_level(store)
    try:
        updater = _refreshed(registry, store, bootstrap, fetcher)
    except (exceptions.RepositoryError, exceptions.DownloadError, ValueError) as exc:
        if fetcher.unreachable is None:
            raise refusal(registry, exc) from None
        if bootstrap is not None:  # nothing kept here to work offline with
            raise fetcher.unreachable from None
        _put_back(store, before)
        return _offline(registry, store, fetcher.unreachable, root)
    _mark(store, VERIFIED_NAME)
    return Verifier(registry, updater, root)


# What python-tuf saves as a refresh goes, one file at a time: a registry that stops answering halfway leaves a
# new timestamp beside the snapshot it does not name, which cannot be used offline, so they are put back.
_REFRESHED = (Timestamp.type, Snapshot.type, Targets.type)


def _top_level(store: Path) -> dict[str, bytes | None]:
    kept: dict[str, bytes | None] = {}
    for role in _REFRESHED:
        try:
            kept[role] = (store / f"{role}.json").read_bytes()
        except OSError:
            kept[role] = None
    return kept


def _put_back(store: Path, before: dict[str, bytes | None]) -> None:
    """The top-level metadata as it was before a refresh that stopped halfway (the root python-tuf verified and
    saved stays: it only ever goes forward)."""
    now = _top_level(store)
    for role, data in before.items():
        if now[role] == data:
            continue
        path = store / f"{role}.json"
        try:
            if data is None:
                path.unlink()
            else:
                write_atomic(path, data)
        except OSError:
            pass  # then offline use refuses, saying the kept metadata does not verify


def _refreshed(registry: Registry, store: Path, bootstrap: bytes | None, fetcher: FetcherInterface) -> Updater:
    updater = Updater(metadata_dir=str(store), metadata_base_url=registry.url + TUF_DIR + "/",
                      target_base_url=registry.url, fetcher=fetcher,
                      config=UpdaterConfig(prefix_targets_with_hash=False), bootstrap=bootstrap)
    updater.refresh()
    return updater


def _offline(registry: Registry, store: Path, unreachable: Unreachable, root: tuple[str, int]) -> Verifier:
    """Work from the metadata kept in ``store``: python-tuf checks it again, expiry included; one warning says so."""
    reason = str(unreachable)
    expires = _kept_expiry(store)
    try:
        updater = _refreshed(registry, store, None, _StoreFetcher(store, registry.url + TUF_DIR + "/"))
    except exceptions.ExpiredMetadataError:
        raise TrustRefused(f"{reason}; the signed metadata of {registry.url} kept here expired"
                           f"{' on ' + expires if expires else ''}, so it cannot be used offline; nothing was "
                           "installed or changed. Try again when the registry can be reached") from None
    except (exceptions.RepositoryError, exceptions.DownloadError, ValueError) as exc:
        raise TrustRefused(f"{reason}; the signed metadata of {registry.url} kept here does not verify on its own "
                           f"({type(exc).__name__}: {exc}), so it cannot be used offline; nothing was installed or "
                           "changed. Try again when the registry can be reached") from None
    registry.warn(f"{reason}; working offline with the signed metadata of {registry.url} as verified "
                  f"{_verified_at(store)} (valid until {expires})")
    return Verifier(registry, updater, root, offline=reason)


def _kept_expiry(store: Path) -> str:
    try:
        return str(json.loads((store / "timestamp.json").read_bytes())["signed"]["expires"])
    except Exception:  # noqa: BLE001 - only for the message
        return ""


def _verified_at(store: Path) -> str:
    for name in (VERIFIED_NAME, "timestamp.json"):
        try:
            when = (store / name).stat().st_mtime
        except OSError:
            continue
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(when))
    return "at an unknown time"


def _mark(store: Path, name: str) -> None:
    try:
        write_atomic(store / name, b"", durable=False)
    except OSError:
        pass  # only for a message
