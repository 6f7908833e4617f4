"""A root a signed registry must be verified from, and who pins it: the lock (client/pins.py) or --trust-root."""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class RootPin:
    """A root a registry must be verified from: its sha256 and version, who pins it and how to change that."""

    sha256: str
    version: int
    source: str  # who pins it, for messages: "skills-lock.json" or "--trust-root FILE"
    names: tuple[str, ...] = ()  # the lock's entries that record it
    global_: bool = False  # pinned by the user lock: `skillreg trust pin --global`
    file: str | None = None  # the root file given with --trust-root

    @property
    def shown(self) -> str:
        return f"root sha256 {self.sha256[:12]}… (version {self.version})"

    @property
    def described(self) -> str:
        """``skills-lock.json (adr-writer, csv-profiler)``: the source and the entries that pin the root."""
        if not self.names:
            return self.source
        more = f" and {len(self.names) - 3} more" if len(self.names) > 3 else ""
        return f"{self.source} ({', '.join(self.names[:3])}{more})"

    def command(self, url: str) -> str:
        """The explicit command that makes this machine's trust store for ``url`` start from this root."""
        given = f" {shlex.quote(self.file)}" if self.file else ""
        return f"skillreg trust pin{' --global' if self.global_ else ''} {url}{given}"
