"""When a signed registry's metadata expires, and the warnings that say so before clients refuse it.

Three clocks run: the timestamp (days, renewed by `trust refresh` or any signed build), the snapshot, targets and
bins (counted from the commit built, renewed only by a build of a later commit), and the root (a year from when it
was signed, renewed only by `trust renew-root` with the offline root key). Each gets its warning, in the build,
`trust refresh` and `check-deploy`, with the one command that renews it.
"""

from __future__ import annotations

from . import lean_tuf  # noqa: F401  (first: python-tuf without boto3)

# isort: split

import datetime as dt
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tuf.api.metadata import Metadata, Root, Timestamp

from ..core.config import RegistryConfig
from ..core.urls import TUF_DIR
from .keys import chain_folder, read_chain

EXPIRY_WARNING_DAYS = 2.0
RENEW_WARNING_DAYS = 30.0  # a signed build and `trust refresh` warn when a file only a new commit renews expires sooner
ROOT_WARNING_DAYS = 30.0  # ... and they and check-deploy when the root does, which only `trust renew-root` renews
MAX_LIVE_ROOTS = 1024  # root versions check-deploy follows (one a year, or one per key rotation)
MAX_ROOT_BYTES = 512_000
Authorize = Callable[[Any, float], None]  # adds the credentials of a urllib request's origin to it (the client's)


def first_expiring(out: Path) -> tuple[str, dt.datetime] | None:
    """The signed file of ``out`` other than the timestamp that expires first, and when: the snapshot the
    timestamp names and every file that snapshot names (None: no readable signed build)."""
    tuf = out / TUF_DIR
    try:
        version = json.loads((tuf / "timestamp.json").read_bytes())["signed"]["meta"]["snapshot.json"]["version"]
        snapshot = json.loads((tuf / f"{version}.snapshot.json").read_bytes())["signed"]
        names = [f"{version}.snapshot.json",
                 *(f"{meta['version']}.{role}" for role, meta in sorted(snapshot["meta"].items()))]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return earliest((name, expires) for name in names if (expires := _expiry_in(tuf / name)) is not None)


def _expiry_in(path: Path) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(json.loads(path.read_bytes())["signed"]["expires"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def earliest(found: Iterable[tuple[str, dt.datetime]]) -> tuple[str, dt.datetime] | None:
    """The first of ``found`` with the earliest expiry."""
    first: tuple[str, dt.datetime] | None = None
    for name, expires in found:
        if first is None or expires < first[1]:
            first = (name, expires)
    return first


def _lapsing(expires: dt.datetime, days: float, now: dt.datetime | None) -> str | None:
    """``expired on WHEN`` or ``expires WHEN (in N days)`` when ``expires`` falls within ``days`` of ``now``;
    None when it is further off."""
    left = expires - (now or dt.datetime.now(dt.UTC))
    if left.total_seconds() >= days * 86400:
        return None
    when = expires.strftime("%Y-%m-%d %H:%M UTC")
    return f"expired on {when}" if left.total_seconds() <= 0 else f"expires {when} (in {left.days} days)"


def renewal_warning(out: Path, found: tuple[str, dt.datetime] | None, *,
                    now: dt.datetime | None = None) -> str | None:
    """A warning when ``found``, the signed file of ``out`` other than the timestamp that expires first (and
    when), expires within RENEW_WARNING_DAYS: its expiry counts from the commit built, so only a build of a later
    commit renews it."""
    if found is None:
        return None
    name, expires = found
    state = _lapsing(expires, RENEW_WARNING_DAYS, now)
    if state is None:
        return None
    return (f"{out / TUF_DIR / name} {state}: it counts from the commit built, so neither a timestamp refresh "
            "nor a build of the same commit renews it, and clients refuse the registry once it has expired; push a "
            "commit (an empty one will do) so the next signed build signs it again")


def root_warning(where: str, expires: dt.datetime, *, now: dt.datetime | None = None) -> str | None:
    """A warning when the registry's newest root, ``where``, expires within ROOT_WARNING_DAYS: only a new root
    version signed with the offline root key renews it."""
    state = _lapsing(expires, ROOT_WARNING_DAYS, now)
    if state is None:
        return None
    return (f"{where}, the registry's root, {state}: clients refuse the registry once it has expired; renew it with "
            "`skillreg trust renew-root --keys KEYS` (KEYS holding root.pem), commit trust/ and build with --sign")


def chain_root_warning(config: RegistryConfig, *, now: dt.datetime | None = None) -> str | None:
    """``root_warning`` for the newest root committed in the registry's trust/ folder."""
    root = read_chain(config).latest.signed
    return root_warning(str(chain_folder(config) / f"{root.version}.root.json"), root.expires, now=now)


class _Unreadable(Exception):
    """A live signed file that could not be read; its text is the warning."""


def _live(url: str, limit: int, timeout: float, authorize: Authorize | None = None) -> bytes | None:
    """The bytes of the live file at ``url`` (at most ``limit``), fetched past caches; None: not published."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Cache-Control": "no-cache", "Pragma": "no-cache"})
    if authorize is not None:
        authorize(request, timeout)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bytes(response.read(limit))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise _Unreadable(f"{url} answered HTTP {exc.code}; cannot tell when it expires") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError):  # a file:// site without signed metadata
            return None
        raise _Unreadable(f"{url} could not be read ({exc.reason})") from None
    except OSError as exc:
        raise _Unreadable(f"{url} could not be read ({exc})") from None


def live_warnings(site_url: str, *, now: dt.datetime | None = None, timeout: float = 10.0,
                  authorize: Authorize | None = None) -> list[str]:
    """What check-deploy warns of in the live registry's signed metadata: a timestamp that expires within two days,
    and a root that expires within 30 (none for an unsigned site: one request, for its timestamp)."""
    url = site_url.rstrip("/") + f"/{TUF_DIR}/timestamp.json"
    try:
        data = _live(url, 16385, timeout, authorize)
        if data is None:
            return []
        expires = Metadata[Timestamp].from_bytes(data).signed.expires
    except _Unreadable as exc:
        return [str(exc)]
    except Exception as exc:  # noqa: BLE001 - any unreadable answer is one warning
        return [f"{url} could not be read as a signed timestamp ({exc})"]
    warnings = []
    left = expires - (now or dt.datetime.now(dt.UTC))
    if left.total_seconds() < EXPIRY_WARNING_DAYS * 86400:
        when = expires.strftime("%Y-%m-%d %H:%M UTC")
        warnings.append(f"{url} expires {when} (in {max(left.total_seconds(), 0) / 3600:.0f} h): clients refuse the "
                        "registry after that; run `skillreg trust refresh --sign KEYS` and deploy, and check the "
                        "scheduled refresh")
    root = live_root_warning(site_url, now=now, timeout=timeout, authorize=authorize)
    return warnings if root is None else [*warnings, root]


def live_root_warning(site_url: str, *, now: dt.datetime | None = None, timeout: float = 10.0,
                      authorize: Authorize | None = None) -> str | None:
    """``root_warning`` for the live registry's newest root: 1.root.json, 2.root.json, ... up to the first one not
    published, as a client walks the chain (None: no signed metadata, or the root lasts another 30 days)."""
    base = site_url.rstrip("/") + f"/{TUF_DIR}/"
    newest: tuple[str, bytes] | None = None
    try:
        for version in range(1, MAX_LIVE_ROOTS + 1):
            data = _live(f"{base}{version}.root.json", MAX_ROOT_BYTES, timeout, authorize)
            if data is None:
                break
            newest = (f"{base}{version}.root.json", data)
        if newest is None:
            return None
        expires = Metadata[Root].from_bytes(newest[1]).signed.expires
    except _Unreadable as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - any unreadable answer is one warning
        return f"{newest[0] if newest else base} could not be read as a signed root ({exc})"
    return root_warning(newest[0], expires, now=now)
