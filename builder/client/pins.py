"""Pinned trust roots: the root a lock entry records for a signed registry binds every use of that registry.

Each entry installed from a signed registry records the root its verifier started from (``trust_root``). That pin
is binding, not advice: whatever this machine's trust store holds, and whatever ``--trust-root`` says, a registry
the lock pins is verified from that root (the registry must be signed, and its chain of roots must start from, or
pass through, the pinned one), and a disagreement is refused. A pin on any entry binds the registry's URL for every
entry of that URL (an entry without one was installed before the registry signed, or by another teammate's
client), and for every entry read through it (``--registry`` naming a mirror). Only ``skillreg trust pin``
changes a pin; ``remove`` of a registry's last entry takes it away with the entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypeVar

from ..core.errors import UsageError
from .locations import normalize_location
from .lock import Lock, LockEntry, peek_lock, recorded
from .root_pin import RootPin


def lock_pins(lock: Lock) -> dict[str, list[RootPin]]:
    """Registry URL -> the distinct roots the lock's entries of that URL pin (one, unless the lock disagrees with
    itself: two branches that each pinned another root, merged)."""
    named: dict[str, dict[tuple[str, int], list[str]]] = {}
    for entry in sorted(lock.entries.values(), key=lambda e: e.name):
        if entry.trust_root is not None:
            roots = named.setdefault(entry.registry, {})
            roots.setdefault((entry.trust_root, entry.trust_root_version), []).append(entry.name)
    return {url: [_pin(lock, root, names) for root, names in roots.items()] for url, roots in named.items()}


def _pin(lock: Lock, root: tuple[str, int], names: Sequence[str]) -> RootPin:
    return RootPin(root[0], root[1], lock.path.name, tuple(names), lock.global_)


class Pinnable(Protocol):
    """What binding needs of client/registry.py's Registry (which imports this module)."""

    url: str

    def pin(self, root: RootPin) -> None: ...


R = TypeVar("R", bound=Pinnable)


def bind(registry: R, lock: Lock, entries: Iterable[LockEntry] = ()) -> R:
    """``registry``, bound to the roots ``lock`` pins for its URL and for each of ``entries`` read through it.
    Call it before the registry is read; two different roots for one registry are refused (``Registry.pin``)."""
    pins = lock_pins(lock)
    for pin in pins.get(registry.url, []):
        registry.pin(pin)
    for entry in entries:
        if entry.registry != registry.url:
            for pin in pins.get(entry.registry, []):
                registry.pin(pin)
    return registry


def bind_project(registry: R, project: Path) -> R:
    """``registry``, bound to what the project's lock in ``project`` pins for it (search, info, MCP's reads)."""
    return bind(registry, peek_lock(project))


@dataclass(frozen=True)
class Pinned:
    """What ``pin_root`` did."""

    url: str
    sha256: str
    version: int
    entries: tuple[str, ...]  # the lock's entries of the registry, which now record the root
    replaced: tuple[str, ...]  # the roots (sha256) the lock pinned before, if other


def pin_root(lock: Lock, location: str, root_file: Path | None) -> tuple[Lock, Pinned]:
    """Pin the registry at ``location`` to the root in ``root_file`` (or, without one, to the root the lock already
    pins for it): every lock entry of that registry records it, and this machine's trust store is started again
    from it (with a file, at once; without, by the next command, which fetches the pinned root and checks it)."""
    from .trust import read_root, reset_store

    url = normalize_location(location)[0]
    pinned = lock_pins(lock).get(url, [])
    data: bytes | None = None
    if root_file is not None:
        data, root = read_root(root_file)
    elif len(pinned) == 1:
        root = (pinned[0].sha256, pinned[0].version)
    else:
        held = f"pins {' and '.join(p.shown for p in pinned)}" if pinned else "pins no root"
        raise UsageError(f"{lock.path.name} {held} for {url}; give the root file to pin: "
                         f"`skillreg trust pin {url} FILE` (the registry's trust/N.root.json)")
    ours = sorted((e for e in lock.entries.values() if e.registry == url), key=lambda e: e.name)
    new = lock
    for entry in ours:
        new = new.with_entry(replace(entry, trust_root=root[0], trust_root_version=root[1]))
    if new.dumps() == lock.dumps():
        reset_store(url, data)
    else:
        with recorded(new) as new:
            reset_store(url, data)
    replaced = tuple(sorted({p.sha256 for p in pinned} - {root[0]}))
    return new, Pinned(url, root[0], root[1], tuple(e.name for e in ours), replaced)


def check_pins(lock: Lock) -> list[str]:
    """One line per problem with the roots ``lock`` pins, from local files only: a registry pinned to two roots,
    or one whose trust store on this machine does not start from (or pass through) the pinned root."""
    from .trust import store_disagrees

    problems = []
    for url, pins in sorted(lock_pins(lock).items()):
        if len(pins) > 1:
            problems.append(f"{url}: {' and '.join(f'{p.described} pins {p.shown}' for p in pins)}; pin the right "
                            f"one: `{pins[0].command(url)} FILE` (the registry's trust/N.root.json)")
            continue
        disagreement = store_disagrees(url, pins[0])
        if disagreement is not None:
            problems.append(f"{url}: {disagreement[0]}. {disagreement[1]}")
    return problems
