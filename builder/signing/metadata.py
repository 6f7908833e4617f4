"""Signing a build with TUF: root, targets, hashed bins, snapshot and timestamp beside the API, under api/v1/tuf/.

Each skill is one signed target, ``api/v1/skills/NAME/digests.json``, which lists the sha256 and length of every
file the skill publishes (its documents, raw files and every version's bundles), so a skill sits in exactly one
bin. The registry-wide documents (index.json, state.json, the discovery and search indexes) are targets of the
top-level targets role. Metadata versions come from git (the first-parent commit count) or the previous signed
metadata, whichever is higher, never from an empty state; expiries come from the commit time. Only the timestamp
reads the clock. A bin whose targets did not change keeps its bytes and version; a rebuild signs again only the
bins of the skills it changed (signing/bins.py says how, and how many bins there are).
"""

from __future__ import annotations

from . import lean_tuf  # noqa: F401  (first: python-tuf without boto3)

# isort: split

import datetime as dt
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml
from securesystemslib.signer import CryptoSigner
from tuf.api.metadata import (
    Delegations,
    Metadata,
    MetaFile,
    Snapshot,
    SuccinctRoles,
    TargetFile,
    Targets,
    Timestamp,
)

from ..core.config import RegistryConfig
from ..core.errors import ConfigError, UsageError
from ..core.fs import write_atomic
from ..core.git import git_output
from ..core.urls import API_ROOT, TUF_DIR, WELL_KNOWN_V1, WELL_KNOWN_V2
from .bins import (
    BIN_PREFIX,
    Previous,
    bin_layout,
    bins_for,
    changed_bins,
    index_matches,
    previous_bin_count,
    read_previous,
)
from .digests import digests_document, digests_path
from .expiry import earliest
from .keys import ONLINE_ROLES, SERIALIZER, RootChain, check_online_keys, load_signer, read_chain

PREVIOUS_ENV = "SKILLREG_TRUST_PREVIOUS"
INDEX_PATH = f"{API_ROOT}/index.json"
DEFAULT_TIMESTAMP_DAYS = 7.0
DEFAULT_METADATA_DAYS = 365.0
TOP_LEVEL_EXTRA = ("api/v1/search/index.json", f"{WELL_KNOWN_V1}/index.json", f"{WELL_KNOWN_V2}/index.json",
                   ".claude-plugin/marketplace.json")


@dataclass(frozen=True)
class TrustSettings:
    """registry.yaml's ``trust:`` section."""

    bins: int | None = None  # None: chosen from the number of signed skills (bins.bins_for)
    timestamp_days: float = DEFAULT_TIMESTAMP_DAYS
    metadata_days: float = DEFAULT_METADATA_DAYS


def trust_settings(config: RegistryConfig) -> TrustSettings:
    if config.path is None:
        return TrustSettings()
    try:
        text = config.path.read_text(encoding="utf-8")
        raw = (yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}).get("trust")
    except (OSError, yaml.YAMLError, AttributeError):
        return TrustSettings()
    if raw is None:
        return TrustSettings()
    if not isinstance(raw, dict) or set(raw) - set(TrustSettings.__dataclass_fields__):
        raise ConfigError(f"{config.path}: `trust` takes bins, timestamp_days and metadata_days, got {raw!r}")
    bins = raw.get("bins")
    if bins is not None and (isinstance(bins, bool) or not isinstance(bins, int) or bins < 2 or bins > 2 ** 16
                             or bins & (bins - 1)):
        raise ConfigError(f"{config.path}: `trust.bins` must be a power of two from 2 to 65,536, got {bins!r}")
    days = {}
    for key in ("timestamp_days", "metadata_days"):
        value = raw.get(key, getattr(TrustSettings, key))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(f"{config.path}: `trust.{key}` must be a positive number of days, got {value!r}")
        days[key] = float(value)
    return TrustSettings(bins=bins, **days)


def published_skills(out: Path) -> list[str]:
    """Every skill with a detail document or a folder in api/v1/skills (one directory scan, no stat per entry)."""
    names: set[str] = set()
    try:
        entries = os.scandir(out / API_ROOT / "skills")
    except FileNotFoundError:
        return []
    with entries:
        for entry in entries:
            if entry.name.endswith(".json") and entry.is_file():
                names.add(entry.name.removesuffix(".json"))
            elif entry.is_dir():
                names.add(entry.name)
    return sorted(names)


def _target(out: Path, rel: str) -> TargetFile:
    return TargetFile.from_data(rel, (out / rel).read_bytes(), ["sha256"])


def top_level_documents(out: Path) -> list[str]:
    found = [p.relative_to(out).as_posix() for p in sorted((out / API_ROOT).glob("*.json")) if p.is_file()]
    return found + [rel for rel in TOP_LEVEL_EXTRA if (out / rel).is_file()]


@dataclass(frozen=True)
class SigningClock:
    """What versions and expiries derive from: the commit's generation and time; ``now`` only for the timestamp."""

    generation: int
    commit_time: dt.datetime
    now: dt.datetime


def git_clock(config: RegistryConfig, now: dt.datetime | None = None) -> SigningClock:
    count = git_output(["rev-list", "--count", "--first-parent", "HEAD"], config.root)
    when = git_output(["log", "-1", "--format=%ct", "HEAD"], config.root)
    now = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    if not count or not when:
        return SigningClock(1, now, now)
    return SigningClock(int(count.strip()), dt.datetime.fromtimestamp(int(when.strip()), dt.UTC), now)


def _expires(start: dt.datetime, days: float) -> dt.datetime:
    return (start + dt.timedelta(days=days)).replace(microsecond=0)


class _Signed:
    """The metadata of one signing run, written as it is made; only new bytes go to disk."""

    def __init__(self, tuf: Path, previous: Previous, clock: SigningClock) -> None:
        self.tuf = tuf
        self.previous = previous
        self.clock = clock
        self.versions: dict[str, int] = {}
        self.written: dict[str, bytes] = {}
        self.kept: set[str] = set()  # files of the previous signing left in place, unread
        self.expiries: dict[str, dt.datetime] = {}  # role -> when its file, written or kept, expires

    def keep(self, role: str, expires: dt.datetime) -> None:
        """Keep the previous signing's file of ``role``, which expires at ``expires``, as it is, at its version."""
        name = self.previous.file_name(role)
        if name is not None:
            self.versions[role] = self.previous.version(role)
            self.kept.add(name)
            self.expiries[role] = expires

    def first_expiring(self) -> tuple[str, dt.datetime] | None:
        """The file of this signing that expires first, as ``first_expiring`` would find it in the output."""
        return earliest((f"{self.versions[role]}.{role}.json", self.expiries[role])
                      for role in sorted(self.expiries, key=lambda role: (role != Snapshot.type, role)))

    def lasts(self, old_expiry: dt.datetime, new_expiry: dt.datetime) -> bool:
        """Whether metadata expiring at ``old_expiry`` may be kept rather than signed again to ``new_expiry``: only
        while at least half of a new signature's lifetime is left after the commit, so a bin or a top-level role
        that no change touches is renewed long before clients would refuse it (counted from the commit time,
        the same commit always decides the same way)."""
        start = self.clock.commit_time
        return old_expiry - start >= (new_expiry - start) / 2

    def settle(self, role: str, metadata: Metadata[Any], signer: Any) -> None:
        """Keep the previous bytes when the signed content is the same; else sign a new version."""
        old_bytes = self.previous.bytes_of(role)
        old = _parsed(old_bytes)
        if old_bytes is not None and old is not None and self.lasts(old.signed.expires, metadata.signed.expires):
            expires = metadata.signed.expires
            metadata.signed.version, metadata.signed.expires = old.signed.version, old.signed.expires
            if old.signed.to_dict() == metadata.signed.to_dict() and _signed_by(old, signer):
                self.versions[role] = old.signed.version
                self.written[f"{old.signed.version}.{role}.json"] = old_bytes
                self.expiries[role] = old.signed.expires
                return
            metadata.signed.expires = expires
        metadata.signed.version = max(self.clock.generation, self.previous.version(role) + 1)
        metadata.sign(signer)
        self.versions[role] = metadata.signed.version
        self.written[f"{metadata.signed.version}.{role}.json"] = metadata.to_bytes(SERIALIZER)
        self.expiries[role] = metadata.signed.expires


def _parsed(data: bytes | None) -> Metadata[Any] | None:
    if data is None:
        return None
    try:
        return Metadata[Any].from_bytes(data)
    except Exception:  # noqa: BLE001 - a damaged previous file is signed again
        return None


def _signed_by(metadata: Metadata[Any], signer: Any) -> bool:
    """Whether ``metadata`` carries a valid signature of ``signer``'s key (previous bytes are reused only then)."""
    key = signer.public_key
    signature = metadata.signatures.get(key.keyid)
    if signature is None:
        return False
    try:
        key.verify_signature(signature, metadata.signed_bytes)
    except Exception:  # noqa: BLE001 - securesystemslib's UnverifiedSignatureError and kin
        return False
    return True


Staged = Mapping[str, tuple[int, str] | None]
"""The skills whose digests.json a build's workers wrote from the bytes they staged, each with the file's length
and sha256 when this build staged it (None: an earlier signing build did, and the output holds it)."""
NOTHING_STAGED: Staged = MappingProxyType({})


def _skill_target(out: Path, staged: Staged) -> Callable[[str], TargetFile]:
    """A skill's signed target: its digests.json, from the length and sha256 its worker reported, else read."""
    def target(name: str) -> TargetFile:
        path = digests_path(name)
        known = staged.get(name)
        if known is None:
            return _target(out, path)
        length, sha256 = known
        return TargetFile(length, {"sha256": sha256}, path)
    return target


def _bins(out: Path, names: Sequence[str], succinct: SuccinctRoles,
          staged: Staged) -> dict[str, dict[str, TargetFile]]:
    bins: dict[str, dict[str, TargetFile]] = {role: {} for role in succinct.get_roles()}
    target = _skill_target(out, staged)
    for name in names:
        path = digests_path(name)
        bins[succinct.get_role_for_target(path)][path] = target(name)
    return bins


def write_digests(out: Path, names: Iterable[str], changed: set[str] | None, staged: Staged = NOTHING_STAGED) -> None:
    """Each skill's digests.json, made from the output when the skill changed (all when ``changed`` is None) or it
    is missing; but not for a skill in ``staged``, whose digests.json the build wrote from the bytes it staged."""
    for name in names:
        if staged.get(name) is not None:
            continue  # staged in this build: the output holds it
        path = out / digests_path(name)
        if (name in staged or (changed is not None and name not in changed)) and path.is_file():
            continue
        data = digests_document(out, name)
        if not path.is_file() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)


@dataclass(frozen=True)
class SignedOutput:
    """What a signing did: the metadata file names it wrote, and the file other than the timestamp that expires
    first, with when (None: none)."""

    written: list[str]
    first_expiry: tuple[str, dt.datetime] | None


@dataclass(frozen=True)
class _Inputs:
    """What one signing signs: the output, its skills, the bin layout, and what changed since the last signing."""

    out: Path
    names: list[str]
    layout: SuccinctRoles
    expires: dt.datetime
    signers: dict[str, CryptoSigner]
    changed: set[str] | None  # None: sign every bin from the output
    staged: Staged  # the skills whose digests.json the build wrote from the bytes it staged


def sign_output(config: RegistryConfig, out: Path, keys: Path, *, changed: set[str] | None = None,
                previous_dir: Path | None = None, now: dt.datetime | None = None,
                index_before: bytes | None = None, staged: Staged = NOTHING_STAGED) -> SignedOutput:
    """Sign the built output ``out``; returns the metadata file names written and the file that expires first.
    ``changed``: the skills whose files this build rewrote (None: all). ``previous_dir``: where the last signed
    metadata was kept (default: out's own). ``index_before``: the output's index.json before this build; only when
    it is the one the last signing in the output covered are ``changed``'s bins alone signed again (else every
    skill's digests are read). ``staged``: the skills whose digests.json the build's workers wrote from the bytes
    they staged, not made again here, with its length and sha256 when they are known (not read again either)."""
    settings = trust_settings(config)
    chain = read_chain(config)
    root = chain.latest.signed
    signers = {role: load_signer(keys, role) for role in ONLINE_ROLES}
    check_online_keys(root, signers, keys)
    tuf = out / TUF_DIR
    previous = read_previous(previous_dir or tuf, root)
    clock = git_clock(config, now)
    names = published_skills(out)
    keyid = signers["targets"].public_key.keyid
    layout = bin_layout(keyid, settings.bins or bins_for(len(names), previous_bin_count(previous, keyid)))
    incremental = (changed is not None and (previous_dir is None or previous_dir == tuf)
                   and previous.layout() == layout and index_matches(previous, INDEX_PATH, index_before))
    inputs = _Inputs(out, names, layout, _expires(clock.commit_time, settings.metadata_days), signers,
                     changed if incremental else None, staged)
    signed = _Signed(tuf, previous, clock)
    if not (incremental and _sign_changed_bins(inputs, signed)):
        write_digests(out, names, changed, staged)
        for role, targets in sorted(_bins(out, names, layout, staged).items()):
            signed.settle(role, Metadata(Targets(expires=inputs.expires, targets=targets)), signers["targets"])
    top = Targets(expires=inputs.expires, targets={rel: _target(out, rel) for rel in top_level_documents(out)},
                  delegations=Delegations(keys={keyid: signers["targets"].public_key}, roles=None,
                                          succinct_roles=layout))
    signed.settle(Targets.type, Metadata(top), signers["targets"])
    snapshot = Snapshot(expires=inputs.expires, meta={f"{role}.json": MetaFile(version)
                                                      for role, version in sorted(signed.versions.items())})
    signed.settle(Snapshot.type, Metadata(snapshot), signers["snapshot"])
    timestamp = _timestamp(previous.timestamp, signed.versions[Snapshot.type], clock.now, settings)
    timestamp.sign(signers["timestamp"])
    return SignedOutput(_publish(tuf, chain, signed, timestamp), signed.first_expiring())


def _sign_changed_bins(inputs: _Inputs, signed: _Signed) -> bool:
    """Sign the bins the changed skills fall in again, from the previous bins' targets; every other bin keeps its
    file untouched (only its expiry is read) unless less than half its lifetime is left. False, with nothing
    signed, when a previous bin it needs cannot be used."""
    changed = inputs.changed or set()
    published = set(inputs.names)
    write_digests(inputs.out, sorted(changed & published), changed, inputs.staged)
    bins = changed_bins(signed.previous, inputs.layout, changed, published, digests_path,
                        _skill_target(inputs.out, inputs.staged))
    if bins is None:
        return False
    for role in signed.previous.roles():
        if role.startswith(f"{BIN_PREFIX}-") and role not in bins:
            expiry = signed.previous.expiry_of(role)
            if expiry is not None and signed.lasts(expiry, inputs.expires):
                signed.keep(role, expiry)
                continue
            kept = signed.previous.bin_targets(role)  # near its expiry: the same targets, signed again
            if kept is None:
                return False
            bins[role] = kept
    for role, targets in bins.items():
        signed.settle(role, Metadata(Targets(expires=inputs.expires, targets=targets)), inputs.signers["targets"])
    return True


def _timestamp(old: Metadata[Timestamp] | None, snapshot_version: int, now: dt.datetime,
               settings: TrustSettings) -> Metadata[Timestamp]:
    """A timestamp naming ``snapshot_version``: its version is the clock's seconds, or one more than the last."""
    version = max(int(now.timestamp()), (old.signed.version + 1) if old is not None else 1)
    return Metadata(Timestamp(version=version, expires=_expires(now, settings.timestamp_days),
                              snapshot_meta=MetaFile(snapshot_version)))


def _publish(tuf: Path, chain: RootChain, signed: _Signed, timestamp: Metadata[Timestamp]) -> list[str]:
    """Write the new files, the root chain, then timestamp.json last; drop versions no snapshot names any more.
    Files kept from the previous signing in place are neither read nor written. Like every other file of the
    output, the versioned files are not flushed to disk one by one (that was 2,000 fsyncs at 60,000 skills): a
    build that a power cut interrupts is built again, and a damaged previous file is signed again."""
    tuf.mkdir(parents=True, exist_ok=True)
    new: list[str] = []
    files = dict(signed.written)
    for number, data in enumerate(chain.versions, 1):
        files[f"{number}.root.json"] = data
    for name, data in sorted(files.items()):
        path = tuf / name
        if not path.is_file() or path.read_bytes() != data:
            write_atomic(path, data, durable=False)
            new.append(name)
    write_atomic(tuf / "timestamp.json", timestamp.to_bytes(SERIALIZER))
    keep = set(files) | signed.kept | {"timestamp.json"}
    for path in tuf.iterdir():
        if path.name not in keep:
            path.unlink()
    return [*new, "timestamp.json"]


def sign_build(config: RegistryConfig, out: Path, state: Path, keys: Path, changed: set[str] | None,
               index_before: bytes | None = None, staged: Staged = NOTHING_STAGED) -> SignedOutput:
    """The build's signing stage: sign ``out`` and keep a copy of the metadata in the output's ``state`` folder, so
    a rebuild that replaced the whole output still finds the versions it must go past. A cold build in CI names the
    last published metadata, restored outside the work tree, with ``SKILLREG_TRUST_PREVIOUS`` (it is checked
    against the root's keys before anything of it is used). ``index_before``: the output's index.json before the
    build, which tells whether ``changed`` covers everything since the last signing. ``staged``: the skills whose
    digests.json the build's workers wrote."""
    tuf = out / TUF_DIR
    kept = state / "tuf"
    restored = os.environ.get(PREVIOUS_ENV)
    previous_dir = tuf if (tuf / "timestamp.json").is_file() else Path(restored) if restored else kept
    signed = sign_output(config, out, keys, changed=changed, previous_dir=previous_dir, index_before=index_before,
                         staged=staged)
    _mirror(tuf, kept, set(signed.written))
    return signed


def _mirror(tuf: Path, kept: Path, written: set[str]) -> None:
    """Make ``kept`` a copy of ``tuf``, copying only the files this signing wrote and those ``kept`` lacks."""
    kept.mkdir(parents=True, exist_ok=True)
    published = {path.name for path in tuf.iterdir()}
    present = {path.name for path in kept.iterdir()}
    for name in sorted(present - published):
        (kept / name).unlink()
    for name in sorted((published - present) | (written & published)):
        write_atomic(kept / name, (tuf / name).read_bytes(), durable=False)


def refresh_timestamp(config: RegistryConfig, out: Path, keys: Path, *, now: dt.datetime | None = None) -> Path:
    """Re-sign timestamp.json alone, with a later version and expiry; nothing else changes."""
    settings = trust_settings(config)
    root = read_chain(config).latest.signed
    signer = load_signer(keys, Timestamp.type)
    check_online_keys(root, {Timestamp.type: signer}, keys)
    path = out / TUF_DIR / "timestamp.json"
    try:
        old = Metadata[Timestamp].from_bytes(path.read_bytes())
        root.verify_delegate(Timestamp.type, old.signed_bytes, old.signatures)
    except FileNotFoundError:
        raise UsageError(f"{path}: no signed build to refresh; build with `skillreg build --sign KEYS` first") from None
    except Exception as exc:  # noqa: BLE001
        raise UsageError(f"{path} is not a timestamp signed by this registry's key ({exc})") from None
    fresh = _timestamp(old, old.signed.snapshot_meta.version, (now or dt.datetime.now(dt.UTC)).replace(microsecond=0),
                       settings)
    fresh.sign(signer)
    write_atomic(path, fresh.to_bytes(SERIALIZER))
    return path
