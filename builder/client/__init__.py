"""The client: find skills in a published registry and install them verified, atomically and locked.

``registry`` reads documents and bundles (with an ETag cache) through ``transport`` (a whole-request deadline,
safe redirects) and ``documents`` (JSON capped by size and shape), ``archive`` unpacks a bundle safely in
memory, ``install`` writes one skill into one folder atomically, ``lock`` keeps ``skills-lock.json``,
``project`` runs install/restore/update/remove/verify over a lock, ``agents`` knows the agents' folders.
"""

from .registry import NotFound, Registry, Unreachable

__all__ = ["NotFound", "Registry", "Unreachable"]
