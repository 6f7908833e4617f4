"""Every version a registry published of one skill (``versions.json``), and which of them a request means.

The document is hostile until checked: it goes through the JSON caps, and every digest, path, sha256 and size
is checked before anything is downloaded. A version without bytes (withdrawn, taken down, pruned) is kept as a
record so a restore can say which and why; a yanked one keeps its bytes but is only ever installed when asked
for by its exact digest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import ClientError
from ..core.model import short_digest
from ..core.urls import API_ROOT, versions_path
from .documents import DIGEST, SHA256
from .locations import check_site_path, require_skill_name
from .registry import Registry
from .transport import NotFound

STATUSES = ("available", "yanked", "withdrawn", "taken-down", "pruned")
WITH_BYTES = ("available", "yanked")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
HEX_PREFIX = re.compile(r"^[0-9a-f]{12,64}$")
# Why a version without bytes cannot be installed, as the user reads it.
_WHY = {"taken-down": "the registry took this version down",
        "withdrawn": "the registry withdrew this version (today's build refuses it)",
        "pruned": "the registry no longer keeps this version's files (pruned)"}


@dataclass(frozen=True)
class ZipBundle:
    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class PublishedVersion:
    digest: str
    version: str | None
    commit: str | None
    time: str | None
    status: str
    reason: str | None
    rules: tuple[str, ...]
    zip: ZipBundle | None

    @property
    def label(self) -> str:
        """``1.2.0 (sha256:0123456789ab…)``, or the short digest alone for a version without metadata.version."""
        short = f"{short_digest(self.digest)}…"
        return f"{self.version} ({short})" if self.version else short


@dataclass(frozen=True)
class PublishedVersions:
    """A skill's versions.json as a registry published it: every version, newest first, and the one to install."""

    name: str
    where: str  # the document's URL, for messages
    latest: str | None  # the digest ``install NAME`` takes; None once the skill left the registry
    versions: tuple[PublishedVersion, ...]  # newest first
    document: Mapping[str, Any]

    @property
    def shallow(self) -> str:
        """A hint for a digest that is not listed: a build from a shallow clone may have missed older versions."""
        if self.document.get("history") == "shallow":
            return " (the registry was built from a shallow git clone, so older versions may be missing)"
        return ""

    def by_digest(self, wanted: str) -> PublishedVersion | None:
        """The version with this full digest or hex prefix (>= 12 digits); None when there is none."""
        hex_wanted = wanted.removeprefix("sha256:").lower()
        found = [v for v in self.versions if len(hex_wanted) >= 12 and v.digest[7:].startswith(hex_wanted)]
        if len(found) > 1:
            raise ClientError(f"{self.name}@{wanted} matches {len(found)} versions in {self.where}; "
                              "give more digits of the digest")
        return found[0] if found else None


def is_digest(spec: str) -> bool:
    """``sha256:…`` or 12 to 64 hex digits: a digest (prefix), not a version string."""
    return spec.startswith("sha256:") or bool(HEX_PREFIX.match(spec.lower()))


def read_history(registry: Registry, name: str) -> PublishedVersions | None:
    """The skill's ``versions.json``; None when the registry publishes none (it predates version history)."""
    require_skill_name(name)
    try:
        doc = registry.document(versions_path(name))
    except NotFound:
        return None
    from .schemas import check_document

    check_document(doc, "versions", f"{registry.url}{versions_path(name)}")
    return parse_history(doc, name, f"{registry.url}{versions_path(name)}")


def parse_history(doc: Mapping[str, Any], name: str, where: str) -> PublishedVersions:
    def bad(why: str) -> ClientError:
        return ClientError(f"{where}: {why}; refusing it")

    if doc.get("name") != name:
        raise bad(f"it does not describe {name!r}")
    latest = doc.get("latest")
    if latest is not None and not (isinstance(latest, str) and DIGEST.match(latest)):
        raise bad("`latest` is not a sha256: digest")
    rows = doc.get("versions")
    if not isinstance(rows, list):
        raise bad("it lists no versions")
    versions, seen = [], set()
    for number, row in enumerate(rows, 1):
        version = _version(row, name, lambda why, n=number: bad(f"version {n:,}: {why}"))
        if version.digest in seen:
            raise bad(f"version {number:,}: {short_digest(version.digest)}… is listed twice")
        seen.add(version.digest)
        versions.append(version)
    if latest is not None and not any(v.digest == latest and v.zip is not None for v in versions):
        raise bad(f"`latest` {short_digest(latest)}… is not a published version with files")
    return PublishedVersions(name, where, latest, tuple(versions), doc)


def _version(row: object, name: str, bad: Any) -> PublishedVersion:
    if not isinstance(row, dict):
        raise bad("not a JSON object")
    digest, status = row.get("digest"), row.get("status")
    if not isinstance(digest, str) or not DIGEST.match(digest):
        raise bad("`digest` is not a sha256: digest")
    if status not in STATUSES:
        raise bad(f"unknown status {status!r}")
    for key in ("version", "time", "reason"):
        if row.get(key) is not None and not isinstance(row.get(key), str):
            raise bad(f"`{key}` is not a string")
    commit = row.get("commit")
    if commit is not None and not (isinstance(commit, str) and COMMIT.match(commit)):
        raise bad("`commit` is not a 40-digit commit id")
    rules = row.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise bad("`rules` is not a list of rule codes")
    raw_zip = row.get("zip")
    if (raw_zip is not None) != (status in WITH_BYTES):
        raise bad(f"its status is {status}, so it {'needs a' if status in WITH_BYTES else 'must have no'} zip")
    bundle = None
    if raw_zip is not None:
        if not isinstance(raw_zip, dict):
            raise bad("`zip` is not a JSON object")
        path = raw_zip.get("path")
        try:
            check_site_path(path, "bundle")
        except ClientError:
            raise bad(f"the zip path {path!r} is not a plain path inside the registry") from None
        folder = f"{API_ROOT}/bundles/{name}/"
        if not (str(path).startswith(folder) and str(path).endswith(".zip")):
            raise bad(f"the zip path {path!r} is not a .zip in {folder}")
        sha256, size = raw_zip.get("sha256"), raw_zip.get("size")
        if not (isinstance(sha256, str) and SHA256.match(sha256)) or isinstance(size, bool) or \
                not isinstance(size, int) or size < 0:
            raise bad("the zip has no sha256 and size")
        bundle = ZipBundle(str(path), sha256, size)
    return PublishedVersion(digest, row.get("version"), commit, row.get("time"), str(status), row.get("reason"),
                            tuple(rules), bundle)


def unavailable(name: str, version: PublishedVersion) -> ClientError:
    """Why a version without bytes cannot be installed: which (taken down, withdrawn, pruned) and the reason."""
    why = _WHY.get(version.status, f"the registry marks this version {version.status}")
    reason = f": {version.reason}" if version.reason else ""
    return ClientError(f"{name} {version.label}: {why}{reason}; it cannot be installed or restored. "
                       f"`skillreg info {name} --versions` lists the versions that can")


def yanked_warning(name: str, version: PublishedVersion) -> str:
    reason = f": {version.reason}" if version.reason else ""
    return f"{name} {version.label} was yanked by the registry{reason}"


def choose(history: PublishedVersions, name: str, spec: str | None) -> tuple[PublishedVersion, list[str]]:
    """The version ``NAME``, ``NAME@DIGEST`` or ``NAME@VERSION`` means, and warnings to show.

    ``NAME`` is the registry's ``latest``; ``NAME@VERSION`` the newest version with files and that
    metadata.version that is not yanked; ``NAME@DIGEST`` exactly that digest, yanked or not (with a warning).
    """
    if spec is None:
        if history.latest is None:
            raise ClientError(f"{name} is no longer in the registry (it left skills/); its old versions stay "
                              f"installable by digest: `skillreg info {name} --versions` lists them")
        found = history.by_digest(history.latest)
        assert found is not None  # parse_history checked it
        return found, []
    if is_digest(spec):
        found = history.by_digest(spec)
        if found is not None:
            if found.zip is None:
                raise unavailable(name, found)
            return found, [yanked_warning(name, found)] if found.status == "yanked" else []
        if spec.startswith("sha256:"):
            raise ClientError(f"{name}: the registry has no version {spec} ({history.where}){history.shallow}; "
                              f"`skillreg info {name} --versions` lists them")
    return _by_version(history, name, spec)


def _by_version(history: PublishedVersions, name: str, spec: str) -> tuple[PublishedVersion, list[str]]:
    matching = [v for v in history.versions if v.version == spec]
    usable = [v for v in matching if v.status == "available"]
    if usable:
        others = [v for v in matching if v is not usable[0]]
        warnings = []
        if others:
            listed = ", ".join(f"{short_digest(v.digest)}… ({v.status})" for v in others)
            warnings.append(f"{name} {spec} was published with {len(matching)} digests; installing the newest, "
                            f"{short_digest(usable[0].digest)}… (also: {listed}); name one as {name}@DIGEST")
        return usable[0], warnings
    if matching:  # every version with that number is yanked or has no files
        first = matching[0]
        if first.status == "yanked":
            raise ClientError(f"{yanked_warning(name, first)}; a yanked version is installed only by its exact "
                              f"digest: {name}@{first.digest}")
        raise unavailable(name, first)
    known = [v.version for v in history.versions if v.version]
    listed = f" (published: {', '.join(dict.fromkeys(known))})" if known else ""
    raise ClientError(f"{name}: the registry has no version {spec!r}{listed}")
