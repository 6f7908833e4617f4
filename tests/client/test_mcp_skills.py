"""``skillreg mcp`` under the MCP Skills extension, driven by the MCP SDK's own client over stdio and streamable
HTTP against a real build: the listing is the registry, every file read matches the manifest it was listed with,
a tampered bundle is never served, and the HTTP endpoint guards its Host and Origin."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
import zipfile
from io import BytesIO
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.client import REPO, RegistryServer
from helpers.mcp import free_port, http_server, list_all, request, session, skillreg_command
from mcp.shared.exceptions import MCPError

from builder.core.urls import SKILLS_MANIFEST_PATH, detail_path

SKILL = "csv-profiler"


def published(site: Path) -> list[str]:
    return sorted(s["name"] for s in json.loads((site / "api/v1/index.json").read_text())["skills"])


async def check_skill(client: Any, site: Path) -> dict[str, Any]:
    """List, get and read every file of SKILL through ``client``; each read is checked against the listing."""
    entries, pages = await list_all(client)
    assert pages == 1 and [e["uri"] for e in entries] == [f"skill://{n}/SKILL.md" for n in published(site)]
    [entry] = [e for e in entries if e["uri"] == f"skill://{SKILL}/SKILL.md"]
    detail = json.loads((site / detail_path(SKILL)).read_text())
    assert entry["frontmatter"] == detail["frontmatter"]
    got = await request(client, "skills/get", {"uri": entry["uri"]})
    assert got["skill"] == entry and "nextCursor" not in got
    assert {r["uri"] for r in entry["resources"]} == {f"skill://{SKILL}/{f['path']}" for f in detail["files"]}
    read = {}
    for resource in entry["resources"]:
        contents = (await client.read_resource(resource["uri"])).contents[0]
        data = contents.text.encode("utf-8") if hasattr(contents, "text") else base64.b64decode(contents.blob)
        assert resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest() and resource["size"] == len(data)
        read[resource["uri"].removeprefix(f"skill://{SKILL}/")] = data
    source = REPO / "skills" / SKILL
    assert read == {p.relative_to(source).as_posix(): p.read_bytes() for p in source.rglob("*") if p.is_file()
                    and "__pycache__" not in p.parts}
    return entry


async def exercise(client: Any, site: Path) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    entry = await check_skill(client, site)
    top = await request(client, "resources/directory/read", {"uri": f"skill://{SKILL}"})
    tools = sorted(t.name for t in (await client.list_tools()).tools)
    return tools, entry, top


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_host_lists_gets_and_reads_every_file_against_the_manifest(site: Path, tmp_path: Path,
                                                                      transport: str) -> None:
    async def run(url: str | None) -> tuple[list[str], dict[str, Any], dict[str, Any], Any]:
        async with session(str(site), url, cwd=tmp_path) as client:
            return (*await exercise(client, site), client.discover_result.capabilities)

    if transport == "http":
        with http_server(str(site), cwd=tmp_path) as url:
            tools, entry, top, capabilities = anyio.run(run, url)
    else:
        tools, entry, top, capabilities = anyio.run(run, None)
    assert capabilities.extensions == {"io.modelcontextprotocol/skills": {"directoryRead": True}}
    assert capabilities.resources is not None
    # An endpoint anyone on it can call does not write into the project unless told to.
    assert tools == (["get_skill", "install_skill", "search_skills"] if transport == "stdio"
                     else ["get_skill", "search_skills"])
    children = {c["name"]: c["mimeType"] for c in top["resources"]}
    assert children["SKILL.md"] == "text/markdown" and children["scripts"] == "inode/directory"
    assert entry["resources"][0]["digest"].startswith("sha256:")


def test_http_offers_install_skill_only_when_allowed(site: Path, tmp_path: Path) -> None:
    async def tools(url: str) -> list[str]:
        async with session(url=url, cwd=tmp_path) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    with http_server(str(site), "--allow-install", cwd=tmp_path) as url:
        assert anyio.run(tools, url) == ["get_skill", "install_skill", "search_skills"]


def test_a_host_on_2025_11_25_sees_tools_and_resources_without_the_extension(site: Path, tmp_path: Path) -> None:
    async def run() -> tuple[Any, list[str], bytes]:
        async with session(str(site), cwd=tmp_path, modern=False) as client:
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            text = (await client.read_resource(f"skill://{SKILL}/SKILL.md")).contents[0].text
            return client.initialize_result, listed, text.encode()

    result, listed, skill_md = anyio.run(run)
    assert result.protocol_version == "2025-11-25" and result.capabilities.extensions is None
    assert listed == [f"skill://{n}/SKILL.md" for n in published(site)]
    assert skill_md == (REPO / "skills" / SKILL / "SKILL.md").read_bytes()


def _rezip(data: bytes, path: str, content: bytes) -> bytes:
    """The same zip with ``path``'s bytes replaced: a well-formed bundle that is not the published one."""
    source = zipfile.ZipFile(BytesIO(data))
    out = BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info, content if info.filename == path else source.read(info))
    return out.getvalue()


@pytest.mark.parametrize("tamper", ["bundle bytes", "bundle and its sha256"])
def test_a_tampered_bundle_is_never_served(site: Path, tmp_path: Path, tamper: str) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    detail_file = copy / detail_path(SKILL)
    detail = json.loads(detail_file.read_text())
    bundle = copy / detail["bundles"]["zip"]["path"]
    evil = _rezip(bundle.read_bytes(), "SKILL.md", b"---\nname: csv-profiler\ndescription: evil\n---\nEvil.\n")
    bundle.write_bytes(evil)
    if tamper == "bundle and its sha256":  # the host was changed too: the skill digest still catches it
        detail["bundles"]["zip"].update(sha256=hashlib.sha256(evil).hexdigest(), size=len(evil))
        detail_file.write_text(json.dumps(detail))

    async def attempt(where: str) -> tuple[list[Any], list[str]]:
        async with session(where, cwd=tmp_path) as client:
            entries, _ = await list_all(client)
            errors = []
            for uri in (f"skill://{SKILL}/SKILL.md", f"skill://{SKILL}/scripts/profile_csv.py"):
                try:
                    await client.read_resource(uri)
                except MCPError as exc:
                    errors.append(str(exc))
            return entries, errors

    with RegistryServer(copy) as server:  # a folder, and over HTTP, where a cached copy must not serve it either
        for where in (str(copy), server.url, server.url):
            entries, errors = anyio.run(attempt, where)
            assert len(entries) == len(published(site))
            assert len(errors) == 2, errors
            assert all(e.startswith(f"refusing to serve {SKILL}: ") and "match the published" in e
                       and "installed" not in e for e in errors), errors


def test_unknown_uris_are_invalid_params(site: Path, tmp_path: Path) -> None:
    async def run() -> list[int]:
        codes = []
        async with session(str(site), cwd=tmp_path) as client:
            for method, params in (("skills/get", {"uri": "skill://no-such-skill/SKILL.md"}),
                                   ("skills/get", {"uri": f"skill://{SKILL}/scripts/profile_csv.py"}),
                                   ("resources/directory/read", {"uri": f"skill://{SKILL}/SKILL.md"}),
                                   ("resources/directory/read", {"uri": f"skill://{SKILL}/nowhere"}),
                                   ("skills/list", {"cursor": "not-a-cursor"}),
                                   ("resources/read", {"uri": f"skill://{SKILL}/../secret-scanner/SKILL.md"})):
                try:
                    await request(client, method, params)
                    codes.append(0)
                except MCPError as exc:
                    codes.append(exc.code)
        return codes

    assert anyio.run(run) == [-32602] * 6


def _post(url: str, host: str, origin: str | None) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    headers = {"Host": host, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if origin:
        headers["Origin"] = origin
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_http_refuses_other_hosts_and_origins(site: Path, tmp_path: Path) -> None:
    with http_server(str(site), "--allowed-host", "skills.example:*", "--allowed-origin", "https://app.example",
                     cwd=tmp_path) as url:
        port = url.split(":")[2].split("/")[0]
        assert _post(url, f"127.0.0.1:{port}", None) == 200
        assert _post(url, f"localhost:{port}", f"http://localhost:{port}") == 200
        assert _post(url, "skills.example:443", "https://app.example") == 200
        assert 400 <= _post(url, "evil.example.com", None) < 500
        assert 400 <= _post(url, f"127.0.0.1:{port}", "http://evil.example.com") < 500


def _mcp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([skillreg_command(), "mcp", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_bad_http_options_are_one_line_errors(site: Path) -> None:
    port = free_port()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen(1)
        cases = [
            (["--http", "99999"], "--http '99999': the port must be a number from 1 to 65535"),
            (["--http", "[::1:80"], "--http '[::1:80': write an IPv6 address as [ADDRESS]:PORT"),
            (["--http", f"0.0.0.0:{port + 1}"], "listens beyond this machine; name the Host values"),
            (["--http", f"[::]:{port + 1}"], "listens beyond this machine; name the Host values"),
            (["--http", f"0:{port + 1}"], "listens beyond this machine; name the Host values"),  # 0.0.0.0 too
            (["--allow-install"], "--allowed-host, --allowed-origin and --allow-install go with --http"),
        ]
        # A port that cannot be listened on is a failure to serve (exit 1), worded as `skillreg serve` words it.
        failures = [
            (["--http", f"no-such-host.invalid:{port}", "--allowed-host", "x"],
             f"Error: cannot serve on no-such-host.invalid:{port}: "),
            (["--http", str(port)], f"Error: port {port} on 127.0.0.1 is in use; pick another with --http [HOST:]PORT"),
        ]
        for args, message, code in [(*case, 2) for case in cases] + [(*case, 1) for case in failures]:
            result = _mcp("--registry", str(site), *args)
            assert result.returncode == code, (args, result.stderr)
            assert message in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_manifest_is_what_a_page_is_built_from(site: Path) -> None:
    manifest = json.loads((site / SKILLS_MANIFEST_PATH).read_text())
    assert manifest["count"] == len(published(site)) and len(manifest["shards"]) == 1


def test_a_file_kept_to_archives_is_a_resource_typed_by_the_registrys_table(tmp_path: Path) -> None:
    """Pages a browser would run have no raw copy on the site; MCP reads them from the verified bundle, and names
    every resource's type from the one table the registry serves by (Rust is text, not mime-db's XML)."""
    from helpers.active import ACTIVE, NAME, active_registry

    from builder.core.config import load_config
    from builder.publish.build import BuildOptions, build

    root = active_registry(tmp_path / "registry")
    build(load_config(root / "registry.yaml"), tmp_path / "site", BuildOptions(site=False))
    wanted = {"assets/evil.html": "text/html", "assets/process.apxml": "text/plain", "src/main.rs": "text/plain",
              "assets/diagram.svg": "image/svg+xml", "SKILL.md": "text/markdown"}

    async def run() -> dict[str, tuple[str, bytes]]:
        async with session(str(tmp_path / "site"), cwd=tmp_path) as client:
            read = {}
            for path in wanted:
                contents = (await client.read_resource(f"skill://{NAME}/{path}")).contents[0]
                read[path] = (contents.mime_type, contents.text.encode("utf-8"))
            return read

    assert anyio.run(run) == {path: (media, (ACTIVE / path).read_bytes()) for path, media in wanted.items()}
