"""`skillreg trust ...`: the keys of a signed registry (init, rotate), its root (renew-root), the timestamp
that must stay fresh, and the root a client pins for a registry it installs from (pin)."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.loader import display_path
from ..core.terminal import visible
from .context import Context, pass_context

KEYS = click.Path(file_okay=False, path_type=Path)


@click.group(short_help="Signing keys, metadata and pinned roots.")
def trust() -> None:
    """Create and rotate the keys of a registry signed with TUF, renew its root, and keep its timestamp fresh;
    pin the root a project trusts for a signed registry it installs from."""


@trust.command(short_help="Create the keys and the first root.")
@click.argument("keys", type=KEYS)
@pass_context
def init(obj: Context, keys: Path) -> None:
    """Create four ed25519 keys in KEYS (mode 0600) and trust/1.root.json beside registry.yaml.

    Keep KEYS/root.pem offline; the other three (targets, snapshot, timestamp) are the online keys a CI secret
    holds. Commit trust/: it is public, and every signed build publishes it.
    """
    from ..signing.keys import init_keys

    written = init_keys(obj.registry("trust init"), keys)
    for path in written:
        click.echo(f"Wrote {display_path(path)}")
    click.echo(f"Keep {display_path(keys / 'root.pem')} offline; commit {display_path(written[-1].parent)}/")


@trust.command(short_help="Re-sign only the timestamp of a signed build.")
@click.option("--sign", "keys", type=KEYS, required=True, help="The KEYS folder (its timestamp.pem is used).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("site"), show_default=True,
              help="The signed build to refresh.")
@pass_context
def refresh(obj: Context, keys: Path, out: Path) -> None:
    """Sign a new timestamp.json for the build in --out, so clients do not see it as frozen; nothing else changes."""
    from ..signing.expiry import chain_root_warning, first_expiring, renewal_warning
    from ..signing.metadata import refresh_timestamp, trust_settings

    config = obj.registry("trust refresh")
    path = refresh_timestamp(config, out, keys)
    click.echo(f"Refreshed {display_path(path)}; it expires in {trust_settings(config).timestamp_days:g} days")
    for warning in (renewal_warning(out, first_expiring(out)), chain_root_warning(config)):
        if warning is not None:
            click.echo(f"Warning: {warning}", err=True)


@trust.command(short_help="Replace one role's key (root included).")
@click.argument("role", type=click.Choice(["root", "targets", "snapshot", "timestamp"]))
@click.option("--keys", type=KEYS, required=True, help="The KEYS folder; root.pem must be in it.")
@pass_context
def rotate(obj: Context, role: str, keys: Path) -> None:
    """Make a new ROLE key and the next root version, signed by the current root key (and the new one, for root),
    so clients that trust the current root follow. Build with --sign afterwards to publish it."""
    from ..signing.keys import rotate_key

    written = rotate_key(obj.registry("trust rotate"), keys, role)
    click.echo(f"Wrote {display_path(written)} and a new {display_path(keys / (role + '.pem'))}; "
               f"commit the root and rebuild with --sign")


@trust.command("renew-root", short_help="Re-sign the root with a new expiry.")
@click.option("--keys", type=KEYS, required=True, help="The KEYS folder; root.pem must be in it.")
@pass_context
def renew_root(obj: Context, keys: Path) -> None:
    """Write the next root version with the same keys, expiring a year from now, signed by the root key: a root
    lasts a year, and clients refuse the registry once its newest root has expired. Clients that trust the
    current root follow. Commit it and build with --sign afterwards to publish it."""
    from ..signing.keys import ROOT_DAYS
    from ..signing.keys import renew_root as renew

    written = renew(obj.registry("trust renew-root"), keys)
    click.echo(f"Wrote {display_path(written)}, expiring in {ROOT_DAYS} days; commit the root and rebuild with "
               "--sign")


@trust.command("fetch-previous", short_help="Fetch a live registry's signed metadata for the next build.")
@click.argument("url")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@pass_context
def fetch_previous(obj: Context, url: str, folder: Path) -> None:
    """Download the api/v1/tuf/ metadata the registry at URL publishes into FOLDER (empty or new), keeping only
    files signed by the keys of this registry's root; then build with SKILLREG_TRUST_PREVIOUS=FOLDER so unchanged
    bins keep their bytes. A site without signed metadata (a first deploy), an unreachable or a tampered one is a
    warning, never a failure: the build then signs everything afresh."""
    from ..ops.trust_previous import fetch_previous as fetch
    from ..signing.keys import read_chain

    root = read_chain(obj.registry("trust fetch-previous")).latest.signed
    fetched = fetch(url, folder, root)
    if fetched.warning is not None:
        click.echo(f"Warning: {fetched.warning}", err=True)
    if fetched.kept:
        click.echo(f"Kept {len(fetched.kept)} signed metadata files in {display_path(folder)}")


@trust.command(short_help="Pin the root a project trusts for a signed registry.")
@click.argument("url")
@click.argument("root", required=False, type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--global", "global_", is_flag=True, help="The user's lock (--global installs) instead of the "
                                                         "current project's.")
def pin(url: str, root: Path | None, global_: bool) -> None:
    """Make ROOT (the registry's trust/N.root.json) the root that every entry of URL in skills-lock.json pins, and
    start this machine's trust store for URL from it; without ROOT, start the trust store again from the root the
    lock already pins.

    A pinned root binds every command that reads the registry: it must be signed, its chain of roots starting from
    that root. Nothing else replaces or drops a pin; this is the command that does, and what the refusal of a
    trust store or --trust-root that disagrees with the lock asks for.
    """
    from ..client.lock import locked
    from ..client.pins import pin_root

    with locked(Path.cwd(), global_=global_) as lock:
        lock, pinned = pin_root(lock, url, root)
    root_shown = f"root sha256 {pinned.sha256[:12]}… (version {pinned.version})"
    if pinned.entries:
        was = f", replacing {', '.join(sha[:12] + '…' for sha in pinned.replaced)}" if pinned.replaced else ""
        click.echo(f"Pinned {visible(pinned.url)} to {root_shown} for {len(pinned.entries)} skill(s) in "
                   f"{display_path(lock.path)}{was}")
    else:
        click.echo(f"{display_path(lock.path)} lists no skill from {visible(pinned.url)}; skills installed from it "
                   f"will record {root_shown}")
    if root is not None:
        click.echo(f"This machine's trust store for {visible(pinned.url)} now starts from {display_path(root)}")
    else:
        click.echo(f"This machine's trust store for {visible(pinned.url)} was emptied: the next command fetches "
                   f"api/v1/tuf/{pinned.version}.root.json and accepts it only with the pinned sha256")
