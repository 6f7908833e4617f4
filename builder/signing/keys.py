"""A signed registry's keys and its chain of root metadata: made once, loaded by every signing, rotated or renewed
by one command each.

The private keys live in a folder the maintainer names (KEYS): ``root.pem`` is meant to be kept offline, the online
roles' keys (targets, snapshot, timestamp) are meant for a CI secret. The root metadata is public and versioned in
the registry's repository (``trust/N.root.json``), so a cold build in CI publishes the whole chain clients follow.
"""

from __future__ import annotations

from . import lean_tuf  # noqa: F401  (first: python-tuf without boto3)

# isort: split

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from securesystemslib.signer import CryptoSigner, Signer
from tuf.api.metadata import Metadata, Root
from tuf.api.serialization.json import JSONSerializer

from ..core.config import RegistryConfig
from ..core.errors import UsageError
from ..core.fs import create_file, write_atomic

ROLES = ("root", "targets", "snapshot", "timestamp")
ONLINE_ROLES = ("targets", "snapshot", "timestamp")
ROOT_CHAIN_DIR = "trust"  # beside registry.yaml: N.root.json, committed
ROOT_DAYS = 365
SERIALIZER = JSONSerializer(compact=False)


def key_path(keys: Path, role: str) -> Path:
    return keys / f"{role}.pem"


def chain_folder(config: RegistryConfig) -> Path:
    return config.root / ROOT_CHAIN_DIR


def _write_private(path: Path, data: bytes) -> None:
    """Create ``path`` with mode 0600; an existing key is never overwritten."""
    try:
        create_file(path, data, mode=0o600)
    except FileExistsError:
        raise UsageError(f"{path} already exists; a key is never overwritten (move it away first)") from None


def new_signer() -> CryptoSigner:
    return CryptoSigner(Ed25519PrivateKey.generate())


def load_signer(keys: Path, role: str) -> CryptoSigner:
    path = key_path(keys, role)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such key (made by `skillreg trust init`)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        private = load_pem_private_key(data, None)
    except (ValueError, TypeError):
        raise UsageError(f"{path} is not an unencrypted PEM private key") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise UsageError(f"{path} is not an ed25519 key")
    return CryptoSigner(private)


def save_signer(keys: Path, role: str, signer: CryptoSigner) -> None:
    _write_private(key_path(keys, role), signer.private_bytes)


@dataclass(frozen=True)
class RootChain:
    """Every root version, oldest first, as the bytes published."""

    versions: tuple[bytes, ...]

    @property
    def latest(self) -> Metadata[Root]:
        return Metadata[Root].from_bytes(self.versions[-1])


def read_chain(config: RegistryConfig) -> RootChain:
    """trust/1.root.json … N.root.json, each checked to be signed by the root before it (and by itself)."""
    folder = chain_folder(config)
    found: list[bytes] = []
    while (folder / f"{len(found) + 1}.root.json").is_file():
        found.append((folder / f"{len(found) + 1}.root.json").read_bytes())
    if not found:
        raise UsageError(f"{folder}/1.root.json: no root metadata; create the keys and the first root with "
                         "`skillreg trust init KEYS`")
    trusted: Metadata[Root] | None = None
    for number, data in enumerate(found, 1):
        where = folder / f"{number}.root.json"
        try:
            new = Metadata[Root].from_bytes(data)
            if new.signed.version != number:
                raise ValueError(f"it says version {new.signed.version}")
            for signer_root in ([trusted] if trusted is not None else []) + [new]:
                signer_root.signed.verify_delegate(Root.type, new.signed_bytes, new.signatures)
        except Exception as exc:  # noqa: BLE001 - any flaw in a root file is one message
            raise UsageError(f"{where} is not a valid root signed by the root before it ({exc})") from None
        trusted = new
    return RootChain(tuple(found))


def check_online_keys(root: Root, signers: Mapping[str, Signer], keys: Path) -> None:
    """Each online key must be the one the latest root names for its role."""
    for role, signer in signers.items():
        keyid = signer.public_key.keyid
        if keyid not in root.roles[role].keyids:
            raise UsageError(f"{key_path(keys, role)} is not the {role} key root version {root.version} trusts; "
                             f"use the KEYS folder of this registry, or rotate it with `skillreg trust rotate {role}`")


def _expiry(now: dt.datetime, days: float) -> dt.datetime:
    return (now + dt.timedelta(days=days)).replace(microsecond=0)


def init_keys(config: RegistryConfig, keys: Path, *, now: dt.datetime | None = None) -> list[Path]:
    """Make the four keys in ``keys`` (0600) and trust/1.root.json; refuses to replace either."""
    folder = chain_folder(config)
    if (folder / "1.root.json").exists():
        raise UsageError(f"{folder}/1.root.json already exists; this registry has keys (rotate one with "
                         "`skillreg trust rotate ROLE`)")
    existing = [key_path(keys, role) for role in ROLES if key_path(keys, role).exists()]
    if existing:
        raise UsageError(f"{existing[0]} already exists; a key is never overwritten (move it away first)")
    keys.mkdir(parents=True, exist_ok=True, mode=0o700)
    signers = {role: new_signer() for role in ROLES}
    root = Root(expires=_expiry(now or dt.datetime.now(dt.UTC), ROOT_DAYS), consistent_snapshot=True)
    for role, signer in signers.items():
        root.add_key(signer.public_key, role)
    metadata = Metadata(root)
    metadata.sign(signers["root"])
    written = []
    for role, signer in signers.items():
        save_signer(keys, role, signer)
        written.append(key_path(keys, role))
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "1.root.json", metadata.to_bytes(SERIALIZER))
    return [*written, folder / "1.root.json"]


def _next_root(config: RegistryConfig, keys: Path, doing: str) -> tuple[Root, CryptoSigner]:
    """The latest root, to become the next version, and the root key that must sign it (refused unless the latest
    root trusts that key)."""
    current = read_chain(config).latest
    root_signer = load_signer(keys, "root")
    if root_signer.public_key.keyid not in current.signed.roles["root"].keyids:
        raise UsageError(f"{key_path(keys, 'root')} is not the root key root version {current.signed.version} "
                         f"trusts; {doing} needs it")
    current.signed.version += 1
    return current.signed, root_signer


def _write_root(config: RegistryConfig, metadata: Metadata[Root]) -> Path:
    written = chain_folder(config) / f"{metadata.signed.version}.root.json"
    write_atomic(written, metadata.to_bytes(SERIALIZER))
    return written


def rotate_key(config: RegistryConfig, keys: Path, role: str, *, now: dt.datetime | None = None) -> Path:
    """Replace ``role``'s key: a new key file, and root version N+1 signed by the old root key and (for the root
    role) by the new one too, so clients that trust version N follow. The old key file is kept as ROLE.pem.N."""
    if role not in ROLES:
        raise UsageError(f"{role!r} is not a role; rotate one of {', '.join(ROLES)}")
    root, old_root_signer = _next_root(config, keys, "rotating")
    fresh = new_signer()
    for keyid in list(root.roles[role].keyids):
        root.revoke_key(keyid, role)
    root.add_key(fresh.public_key, role)
    root.expires = _expiry(now or dt.datetime.now(dt.UTC), ROOT_DAYS)
    metadata = Metadata(root)
    metadata.sign(old_root_signer)
    if role == "root":
        metadata.sign(fresh, append=True)
    retired = keys / f"{role}.pem.{root.version - 1}"
    os.replace(key_path(keys, role), retired)
    save_signer(keys, role, fresh)
    return _write_root(config, metadata)


def renew_root(config: RegistryConfig, keys: Path, *, now: dt.datetime | None = None) -> Path:
    """Root version N+1 with the same keys and a new expiry, ROOT_DAYS from ``now``, signed by the root key: a root
    lasts a year, and clients refuse a registry whose newest root has expired. Clients that trust version N follow,
    as after a rotation (N's root key signs N+1)."""
    root, root_signer = _next_root(config, keys, "renewing the root")
    root.expires = _expiry(now or dt.datetime.now(dt.UTC), ROOT_DAYS)
    metadata = Metadata(root)
    metadata.sign(root_signer)
    return _write_root(config, metadata)
