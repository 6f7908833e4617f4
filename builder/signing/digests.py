"""A skill's ``digests.json``: the sha256 and length of every file the skill publishes, the one target a signed
registry signs for it (signing/metadata.py).

A signing build's workers write it from the bytes they stage (``DigestRecorder``), so the signing stage reads no
skill's files again; a skill the build kept from an earlier, unsigned build has none, and the signing stage
makes its document from the output (``digests_document``). Both give the same bytes. This module imports no
TUF, so workers that write it stay light.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..core.bundle import dumps
from ..core.model import sha256_hex
from ..core.urls import API_ROOT, skill_units

DIGESTS_NAME = "digests.json"


def digests_path(name: str) -> str:
    return f"{API_ROOT}/skills/{name}/{DIGESTS_NAME}"


def _document(name: str, files: dict[str, dict[str, int | str]]) -> bytes:
    return dumps({"api_version": 1, "name": name, "files": files})  # the API's one encoding: sorted keys, compact


def _entry(data: bytes) -> dict[str, int | str]:
    return {"length": len(data), "sha256": sha256_hex(data)}


class DigestRecorder:
    """The digest of every file a worker stages for one skill, made into its digests.json at the end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.files: dict[str, dict[str, int | str]] = {}

    def add(self, rel: str, data: bytes) -> None:
        self.files[rel] = _entry(data)

    def document(self) -> tuple[str, bytes]:
        """digests.json's path and bytes (its length and sha256 are what the signing stage signs)."""
        own = digests_path(self.name)
        return own, _document(self.name, {rel: entry for rel, entry in self.files.items() if rel != own})


def _files_under(out: Path, rel: str) -> Iterable[str]:
    path = out / rel
    if path.is_file():
        yield rel
    elif path.is_dir():
        for current, dirs, files in os.walk(path):
            dirs.sort()
            for file in sorted(files):
                yield Path(current, file).relative_to(out).as_posix()


def digests_document(out: Path, name: str) -> bytes:
    """``name``'s digests.json made from the files the output holds."""
    own = digests_path(name)
    return _document(name, {rel: _entry((out / rel).read_bytes())
                            for unit in skill_units(name) for rel in _files_under(out, unit) if rel != own})
