"""``skillreg mcp`` driven by the MCP SDK's own stdio client, against a registry served on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.client import RegistryServer, mcp_session, tree

from builder.core.search import rank


def _payload(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def test_mcp_server_over_stdio(site: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    import anyio

    with RegistryServer(site) as server:
        tools, results = anyio.run(mcp_session, server.url, project, [
            ("search_skills", {"query": "data"}),
            ("search_skills", {"query": "csv", "limit": 1, "category": "data"}),
            ("search_skills", {"query": "csv", "limit": 51}),
            ("get_skill", {"id": "csv-profiler"}),
            ("get_skill", {"id": "no-such-skill"}),
            ("install_skill", {"slug": "csv-profiler", "target": "codex"}),
        ])
    assert tools == ["get_skill", "install_skill", "search_skills"]
    found, one, too_many, skill, missing, installed = results

    index = json.loads((site / "api/v1/search-index.json").read_text())
    data = _payload(found)
    assert data["query"] == "data" and data["count"] == len(data["skills"])
    assert [s["slug"] for s in data["skills"]] == [h.name for h in rank(index, "data")]
    first = _payload(one)["skills"][0]
    title = next(row[4] for row in index["skills"] if row[0] == "csv-profiler").split(" · ")[0]
    detail = json.loads((site / "api/v1/skills/csv-profiler.json").read_text())
    assert first == {
        "id": "csv-profiler", "slug": "csv-profiler", "title": title, "description": detail["description"],
        "author": detail["frontmatter"]["metadata"]["author"], "contributors": ["Test Author"],
        "category": detail["category"], "tags": detail["tags"],
        "version": detail["version"], "digest": detail["digest"],
        "files": [f["path"] for f in detail["files"]], "fileCount": len(detail["files"]),
        "createdAt": "2026-01-02T03:04:05Z", "link": f"{server.url}skills/csv-profiler/",
    }

    assert too_many.is_error
    assert "limit" in too_many.content[0].text

    got = _payload(skill)
    assert {f["filename"]: f["content"].encode() for f in got["files"]} == \
        {f["path"]: (site / f["raw"]).read_bytes() for f in detail["files"]}
    assert got["slug"] == "csv-profiler" and got["fileCount"] == len(detail["files"])

    assert missing.is_error
    assert missing.content[0].text == f"Error executing tool get_skill: no skill named 'no-such-skill' in {server.url}"

    done = _payload(installed)
    folder = project / ".agents/skills/csv-profiler"
    assert done["status"] == "installed" and Path(done["path"]) == folder
    assert tree(folder)["scripts/profile_csv.py"][1] == 0o755
    lock = json.loads((project / "skills-lock.json").read_text())
    assert lock["skills"]["csv-profiler"]["targets"] == [".agents/skills/csv-profiler"]
