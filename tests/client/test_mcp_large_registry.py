"""The SDK's client pages through ``skills/list`` of a 60,000-skill registry to the end: within the 50 pages a
host follows, every skill once, in order, each with its whole file list. The registry's documents are made with
the builder's own manifest writer from generated rows (a full build of 60,000 skills takes minutes)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import anyio
import pytest
from helpers.mcp import list_all, request, session

from builder.core.bundle import dumps
from builder.publish.skills_manifest import shard_documents

COUNT = 60_000

pytestmark = pytest.mark.slow


def generated_registry(root: Path) -> list[str]:
    names = [f"skill-{n:05d}" for n in range(COUNT)]
    rows = []
    for name in names:
        digest = hashlib.sha256(name.encode()).hexdigest()
        rows.append({"name": name, "digest": "sha256:" + digest, "skill_md": "SKILL.md",
                     "frontmatter": {"name": name, "description": f"Generated skill {name}."},
                     "files": [{"path": "SKILL.md", "sha256": digest, "size": 120},
                               {"path": "references/guide.md", "sha256": digest[::-1], "size": 64}]})
    for rel, data in shard_documents(rows).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "api/v1/index.json").write_bytes(dumps({"api_version": 1, "count": COUNT, "skills": [
        {"name": name} for name in names]}))
    return names


def test_the_sdk_client_pages_through_sixty_thousand_skills(tmp_path: Path) -> None:
    site = tmp_path / "site"
    names = generated_registry(site)
    assert json.loads((site / "api/v1/skills-manifest.json").read_text())["count"] == COUNT

    async def run() -> tuple[list[dict[str, object]], int, dict[str, object]]:
        async with session(str(site), cwd=tmp_path) as client:
            entries, pages = await list_all(client)
            last = await request(client, "skills/get", {"uri": f"skill://{names[-1]}/SKILL.md"})
            return entries, pages, last

    entries, pages, last = anyio.run(run)
    assert pages <= 50 and len(entries) == COUNT
    assert [e["uri"] for e in entries] == [f"skill://{name}/SKILL.md" for name in names]
    assert all(len(e["resources"]) == 2 for e in entries)  # type: ignore[arg-type]
    assert last["skill"] == entries[-1]
