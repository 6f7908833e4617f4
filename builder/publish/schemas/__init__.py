"""JSON Schemas of every published document, shipped with the package and published under api/v1/schema/, and
of the lock file a client writes (``lock.schema.json``, shipped only: it describes no published document)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from ...core.bundle import dumps

PUBLISHED = ("index", "collection", "detail", "bundle", "discovery-v1", "discovery-v2", "versions", "head", "state",
             "skills-manifest", "skills-manifest-shard")
SCHEMA_DIR = "api/v1/schema"


def schema_text(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(schema_text(name))
    return schema


def write_schemas(root: Path) -> None:
    """Published compact, as every other document (the package keeps them indented, for people to read)."""
    folder = root / SCHEMA_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for name in PUBLISHED:
        (folder / f"{name}.schema.json").write_bytes(dumps(load_schema(name)))
