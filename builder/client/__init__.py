"""The client: find skills in a published registry and install them verified, atomically and locked.

``registry`` reads documents and bundles from where ``locations`` says, through ``fetch`` (retried GETs) over
``transport`` (a whole-request deadline; ``reach`` judges where each connection and redirect lands;
``credentials`` gives each request its own origin's credentials, for a registry behind a login), keeps them
in ``cache`` (with ETags) and parses them with ``documents`` (JSON capped by size and shape), ``archive`` unpacks
a bundle safely in memory, ``install`` writes one skill into one folder atomically, ``lock`` keeps
``skills-lock.json``, ``project`` runs install/restore/update/remove/verify over a lock, ``trust`` verifies a
signed registry from the root ``pins`` binds it to, ``agents`` knows the agents' folders.
"""

from .registry import Registry
from .transport import NotFound, Unreachable

__all__ = ["NotFound", "Registry", "Unreachable"]
