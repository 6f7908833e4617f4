"""The MCP Skills extension over a signed registry: the skill manifest's shards are covered by the signed manifest
that names their sha256, so an untouched signed registry lists and reads with no warning, and a shard altered on
the host (with or without the manifest rewritten to match) is refused. Driven by the MCP SDK's client over stdio and
streamable HTTP against a real signed build served on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.client import RegistryServer
from helpers.mcp import http_server, list_all, request, session
from helpers.trust import SKILL, signed_builds
from mcp.shared.exceptions import MCPError

from builder.client.trust import TRUST_ROOT_ENV
from builder.core.urls import SKILLS_MANIFEST_PATH, TUF_DIR


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return signed_builds(tmp_path_factory.mktemp("signed"))


@pytest.fixture
def pinned(signed: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The root given, as --trust-root does: the server then has nothing to say on first use either."""
    monkeypatch.setenv(TRUST_ROOT_ENV, str(signed["registry"] / "trust/1.root.json"))


def _published(site: Path) -> list[str]:
    return sorted(s["name"] for s in json.loads((site / "api/v1/index.json").read_text())["skills"])


async def _list_get_read(client: Any) -> tuple[list[Any], dict[str, Any], bytes]:
    entries, _ = await list_all(client)
    got = await request(client, "skills/get", {"uri": f"skill://{SKILL}/SKILL.md"})
    read = (await client.read_resource(f"skill://{SKILL}/SKILL.md")).contents[0].text.encode()
    return entries, got, read


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_untouched_signed_registry_lists_and_reads_with_no_warning(signed: dict[str, Path], tmp_path: Path,
                                                                       pinned: None, transport: str) -> None:
    site = signed["v2"]

    async def run(where: str | None, url: str | None) -> tuple[list[Any], dict[str, Any], bytes]:
        async with session(where, url, cwd=tmp_path) as client:
            return await _list_get_read(client)

    with RegistryServer(site) as server:
        if transport == "http":
            with http_server(server.url, cwd=tmp_path) as url:
                entries, got, read = anyio.run(run, None, url)
            log = next(tmp_path.glob("mcp-http-*.log")).read_text()
        else:
            entries, got, read = anyio.run(run, server.url, None)
            log = (tmp_path / "mcp-stderr.txt").read_text()
    assert [e["uri"] for e in entries] == [f"skill://{n}/SKILL.md" for n in _published(site)]
    assert got["skill"]["uri"] == f"skill://{SKILL}/SKILL.md"
    assert read == (signed["registry"] / "skills" / SKILL / "SKILL.md").read_bytes()
    assert "Warning" not in log and "Note" not in log and "tampered" not in log, log


def _shard(site: Path) -> tuple[dict[str, Any], Path]:
    manifest = json.loads((site / SKILLS_MANIFEST_PATH).read_text())
    return manifest, site / manifest["shards"][0]["path"]


def _altered_shard(site: Path, rewrite_manifest: bool) -> None:
    """The shard with csv-profiler's description changed; with ``rewrite_manifest``, the manifest made to name the
    new bytes too (what a host that can change any file does), which its signed length and sha256 then catch."""
    manifest, shard = _shard(site)
    data = shard.read_bytes().replace(b"Profiles CSV", b"Pr0files CSV", 1)
    assert data != shard.read_bytes()
    shard.write_bytes(data)
    if rewrite_manifest:
        manifest["shards"][0].update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
        (site / SKILLS_MANIFEST_PATH).write_text(json.dumps(manifest, sort_keys=True))


@pytest.mark.parametrize("tamper, message", [
    ("shard", "the download does not match the published sha256"),
    ("shard and manifest", f"{SKILLS_MANIFEST_PATH} was tampered with: it does not match its signed length"),
])
def test_an_altered_shard_of_a_signed_registry_is_refused(signed: dict[str, Path], tmp_path: Path, pinned: None,
                                                          tamper: str, message: str) -> None:
    site = tmp_path / "site"
    shutil.copytree(signed["v2"], site)
    _altered_shard(site, rewrite_manifest=tamper == "shard and manifest")

    async def attempt(url: str) -> list[str]:
        errors = []
        async with session(url, cwd=tmp_path) as client:
            for method, params in (("skills/list", {}), ("skills/get", {"uri": f"skill://{SKILL}/SKILL.md"}),
                                   ("resources/list", {})):
                try:
                    await request(client, method, params)
                except MCPError as exc:
                    errors.append(str(exc))
        return errors

    with RegistryServer(site) as server:
        errors = anyio.run(attempt, server.url)
    assert len(errors) == 3, errors
    assert all(message in error and "\n" not in error for error in errors), errors


def test_a_shard_the_signed_manifest_does_not_name_is_refused_by_the_verifier(signed: dict[str, Path],
                                                                             tmp_path: Path, pinned: None) -> None:
    """The verifier's own rule, under the listing's check: bytes of a shard path are accepted only when the signed
    manifest names that path with their sha256 and length (an older shard, still on the host, is not)."""
    from builder.client.registry import Registry
    from builder.client.trust import TrustRefused

    site = tmp_path / "site"
    shutil.copytree(signed["v2"], site)
    manifest, shard = _shard(site)
    old_path = "api/v1/skills-manifest/000000000000.json"
    with RegistryServer(site) as server:
        registry = Registry(server.url)
        entry = manifest["shards"][0]
        assert registry.artifact(entry["path"], entry["sha256"], entry["size"]) == shard.read_bytes()
        (site / old_path).write_bytes(shard.read_bytes())
        with pytest.raises(TrustRefused) as refused:
            registry.artifact(old_path, entry["sha256"], entry["size"])
    assert str(refused.value).startswith(f"{server.url}{old_path} was tampered with: the signed "
                                         f"{SKILLS_MANIFEST_PATH} does not list these bytes")
    assert (site / TUF_DIR / "timestamp.json").is_file()
