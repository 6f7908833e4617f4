"""The collections a build publishes: listed in index.json, one document each under api/v1/collections/.

A collection lists the published skills in it by slug; one with none published is left out, so a reader never
meets a collection it cannot install anything from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.bundle import dumps
from ..core.collections import Collections, read_collections
from ..core.config import RegistryConfig
from ..core.discovery import Discovery
from ..core.urls import API_VERSION, COLLECTIONS_DIR, collection_path, detail_path
from .api import url_of
from .manifest import StoredManifest
from .outcome import SkillOutcome, joined_rows
from .transaction import stage_file


def published_collections(config: RegistryConfig, found: Discovery, slugs: Mapping[str, str],
                          index_rows: Sequence[bytes | None]) -> tuple[list[dict[str, Any]], Collections]:
    """The index's ``collections`` list (sorted by name) and the collections read. ``slugs``: repository path ->
    slug of each published skill, in the order of ``index_rows`` (their index rows, read for the category of
    each when registry.yaml names categories)."""
    categories: dict[str, str | None] = {}
    if config.categories:
        for path, row in zip(slugs, index_rows):
            categories[path] = json.loads(row).get("category") if row else None
    read = read_collections(config, found, categories)
    listed = [c.to_json(slugs) for c in read.items]
    return sorted((c for c in listed if c["skills"]), key=lambda c: c["name"]), read


def collection_documents(config: RegistryConfig, listed: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    """api/v1/collections/<name>.json of each listed collection: its fields and each skill's detail URL."""
    documents = {}
    for collection in listed:
        document = {"api_version": API_VERSION, **collection,
                    "links": {name: url_of(config, detail_path(name)) for name in collection["skills"]}}
        documents[collection_path(collection["name"])] = dumps(document)
    return documents


def stage_collections(tmp: Path, config: RegistryConfig, found: Discovery, kept: Sequence[SkillOutcome],
                      kept_paths: Sequence[str], stored: StoredManifest | None) -> list[dict[str, Any]]:
    """Stage a document per collection of the published skills ``kept`` (at ``kept_paths``); returns the index's
    list of them."""
    rows = joined_rows("index", kept, stored) if config.categories else []
    listed, _ = published_collections(config, found, dict(zip(kept_paths, (o.name for o in kept))), rows)
    for rel, data in collection_documents(config, listed).items():
        stage_file(tmp, rel, data)
    return listed


__all__ = ["COLLECTIONS_DIR", "collection_documents", "published_collections", "stage_collections"]
