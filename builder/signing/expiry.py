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
from collections.abc import Iterable
from pathlib import Path

from tuf.api.metadata import Metadata, Timestamp

from ..core.urls import TUF_DIR

EXPIRY_WARNING_DAYS = 2.0
RENEW_WARNING_DAYS = 30.0  # a signed build and `trust refresh` warn when a file only a new commit renews expires sooner


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


def renewal_warning(out: Path, found: tuple[str, dt.datetime] | None, *,
                    now: dt.datetime | None = None) -> str | None:
    """A warning when ``found``, the signed file of ``out`` other than the timestamp that expires first (and
    when), expires within RENEW_WARNING_DAYS: its expiry counts from the commit built, so only a build of a later
    commit renews it."""
    if found is None:
        return None
    name, expires = found
    left = expires - (now or dt.datetime.now(dt.UTC))
    if left.total_seconds() >= RENEW_WARNING_DAYS * 86400:
        return None
    when = expires.strftime("%Y-%m-%d %H:%M UTC")
    state = f"expired on {when}" if left.total_seconds() <= 0 else f"expires {when} (in {left.days} days)"
    return (f"{out / TUF_DIR / name} {state}: it counts from the commit built, so neither a timestamp refresh "
            "nor a build of the same commit renews it, and clients refuse the registry once it has expired; push a "
            "commit (an empty one will do) so the next signed build signs it again")


def live_timestamp_warning(site_url: str, *, now: dt.datetime | None = None, timeout: float = 10.0) -> str | None:
    """A warning when the live registry's signed timestamp expires within two days (None: later, or unsigned)."""
    import urllib.error
    import urllib.request

    url = site_url.rstrip("/") + f"/{TUF_DIR}/timestamp.json"
    request = urllib.request.Request(url, headers={"Cache-Control": "no-cache", "Pragma": "no-cache"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            expires = Metadata[Timestamp].from_bytes(response.read(16385)).signed.expires
    except urllib.error.HTTPError as exc:
        return None if exc.code == 404 else f"{url} answered HTTP {exc.code}; cannot tell when it expires"
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError):  # a file:// site without signed metadata
            return None
        return f"{url} could not be read ({exc.reason})"
    except Exception as exc:  # noqa: BLE001 - any unreadable answer is one warning
        return f"{url} could not be read as a signed timestamp ({exc})"
    left = expires - (now or dt.datetime.now(dt.UTC))
    if left.total_seconds() >= EXPIRY_WARNING_DAYS * 86400:
        return None
    when = expires.strftime("%Y-%m-%d %H:%M UTC")
    return (f"{url} expires {when} (in {max(left.total_seconds(), 0) / 3600:.0f} h): clients refuse the registry "
            "after that; run `skillreg trust refresh --sign KEYS` and deploy, and check the scheduled refresh")

