"""What a JSON document may cost once parsed: every value counts, scalars included, not only objects and arrays.

15 MiB of short strings or floats parse into some 300 MiB; such documents are refused from a scan of their bytes,
one line naming the URL or file, wherever the client reads untrusted JSON: the registry's documents, the skill
manifest's shards (MCP), a signed registry's metadata (python-tuf parses it whole), the lock file and the deploy
check. Real servers on 127.0.0.1; memory is measured in-process with tracemalloc as a sanity check only."""

from __future__ import annotations

import hashlib
import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from helpers.client import Fault, RegistryServer, run
from helpers.trust import SKILL, signed_builds

from builder.client import documents
from builder.client.documents import MAX_DOCUMENT_VALUES, MAX_INDEX_VALUES, json_shape_problem
from builder.core.urls import SKILLS_MANIFEST_PATH, TUF_DIR

INDEX = "api/v1/index.json"
WHOLE = "api/v1/search-index.json"
SEARCH = "api/v1/search/index.json"
DETAIL = "api/v1/skills/log-summarizer.json"
MIB = 1024 * 1024

# One short string or one float per value: a few bytes each in the document, 30 to 60 bytes each once parsed.
SCALARS = {"short strings": b'"ab",', "floats": b"1.5,"}


def hostile(scalar: bytes, size: int) -> bytes:
    """A JSON object whose "skills" array holds ``scalar`` over and over, ``size`` bytes in all."""
    head, tail = b'{"api_version": 1, "skills": [', b"0]}"
    return head + scalar * ((size - len(head) - len(tail)) // len(scalar)) + tail


def failed(result: Result, message: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr, result.stderr


def values(doc: Any) -> int:
    """The values a parsed document holds, keys included, as the scan counts them (an empty container twice)."""
    if isinstance(doc, dict):
        return 1 + (not doc) + sum(1 + values(v) for v in doc.values())
    if isinstance(doc, list):
        return 1 + (not doc) + sum(values(v) for v in doc)
    return 1


@pytest.mark.parametrize("kind", sorted(SCALARS))
def test_an_index_of_many_short_values_is_refused_with_small_memory(kind: str, site: Path, project: Path) -> None:
    """32 MiB, a quarter of an index's byte cap: about 7 million strings or 8 million floats."""
    body = hostile(SCALARS[kind], 32 * MIB)
    tracemalloc.start()
    try:
        problem = json_shape_problem(body, max_values=MAX_INDEX_VALUES)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problem == f"it holds more than {MAX_INDEX_VALUES:,} JSON values (strings, numbers, keys, objects and " \
                      "arrays)"
    assert peak < 8 * MIB, peak  # parsed, the same bytes would take some 250 to 400 MiB
    with RegistryServer(site) as server:
        server.state.fault(SEARCH, *[Fault(status=404)] * 2)  # a registry published before the sharded index
        server.state.overrides[WHOLE] = body
        failed(run("search", "log", "--registry", server.url),
               f"{server.url}{WHOLE}: it holds more than {MAX_INDEX_VALUES:,} JSON values")


@pytest.mark.parametrize("kind", sorted(SCALARS))
def test_a_skill_document_or_a_lock_of_many_short_values_is_refused(kind: str, site: Path, project: Path) -> None:
    body = hostile(SCALARS[kind], 15 * MIB)
    with RegistryServer(site) as server:
        server.state.overrides[DETAIL] = body
        failed(run("info", "log-summarizer", "--registry", server.url),
               f"{server.url}{DETAIL}: it holds more than {MAX_DOCUMENT_VALUES:,} JSON values")
    (project / "skills-lock.json").write_bytes(body)
    failed(run("list"), f"skills-lock.json: it holds more than {MAX_DOCUMENT_VALUES:,} JSON values")


def test_a_manifest_shard_of_many_floats_is_refused_by_the_listing(site: Path, tmp_path: Path) -> None:
    """MCP's skills/list reads the skill manifest a shard a page; on an unsigned registry the host may rewrite the
    manifest to name any shard (a signed one refuses that: tests/client/test_mcp_signed.py)."""
    from builder.client.registry import Registry
    from builder.client.skill_pages import SkillPages
    from builder.core.errors import ClientError

    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    manifest = json.loads((copy / SKILLS_MANIFEST_PATH).read_text())
    shard = hostile(SCALARS["floats"], 20 * MIB)
    manifest["shards"][0].update(sha256=hashlib.sha256(shard).hexdigest(), size=len(shard))
    (copy / manifest["shards"][0]["path"]).write_bytes(shard)
    (copy / SKILLS_MANIFEST_PATH).write_text(json.dumps(manifest))
    with RegistryServer(copy) as server, pytest.raises(ClientError) as refused:
        SkillPages(Registry(server.url)).page(0)
    assert str(refused.value) == (f"{server.url}{manifest['shards'][0]['path']}: it holds more than "
                                  f"{MAX_INDEX_VALUES:,} JSON values (strings, numbers, keys, objects and arrays); "
                                  "refusing it")


def test_signed_metadata_of_many_floats_is_refused_before_python_tuf_parses_it(tmp_path: Path,
                                                                                project: Path) -> None:
    signed = signed_builds(tmp_path / "signed")
    site = signed["v2"]
    version = json.loads((site / TUF_DIR / "timestamp.json").read_text())["signed"]["meta"]["snapshot.json"][
        "version"]
    snapshot = site / TUF_DIR / f"{version}.snapshot.json"
    snapshot.write_bytes(hostile(SCALARS["floats"], 4 * MIB + 512 * 1024))  # within python-tuf's 5 MB
    with RegistryServer(site) as server:
        result = run("install", SKILL, "--registry", server.url)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert f"{server.url}{TUF_DIR}/{version}.snapshot.json: it holds more than {MAX_DOCUMENT_VALUES:,} JSON " \
           "values" in errors[0] and "nothing was installed or changed" in errors[0], errors[0]
    assert not (project / ".claude").exists() and not (project / "skills-lock.json").exists()


def test_the_deploy_check_refuses_a_live_index_of_many_floats(site: Path) -> None:
    commit = json.loads((site / INDEX).read_text())["source"]["commit"]
    with RegistryServer(site) as server:
        server.state.overrides[INDEX] = hostile(SCALARS["floats"], 32 * MIB)
        result = run("check-deploy", server.url, "--commit", commit, "--timeout", "0")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and f"{server.url}{INDEX}?commit=" not in errors[0], result.stderr
    assert errors[0].startswith(f"Error: {server.url}{INDEX} could not be read (it holds more than "
                                f"{MAX_INDEX_VALUES:,} JSON values"), errors[0]


def test_real_documents_pass_and_are_counted_exactly_across_chunks(site: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind the client reads, counted a few bytes at a time (so chunks end inside strings, escapes and
    numbers) and whole: the count is the document's own, so a limit of exactly it passes and one less refuses."""
    escapes = json.dumps({"a\\": ['\\"', "x\\\\", {"]": "[{"}, [], {}], "b": "\u2028\U0001F600"}).encode()
    real = [(site / path).read_bytes() for path in (INDEX, WHOLE, SEARCH, DETAIL, SKILLS_MANIFEST_PATH)]
    shard = json.loads(real[-1])["shards"][0]["path"]
    for data in [*real, (site / shard).read_bytes(), escapes]:
        exact = values(json.loads(data))
        for chunk in (3, 1024 * 1024):
            monkeypatch.setattr(documents, "_CHUNK", chunk)
            assert json_shape_problem(data, max_values=exact) is None
            assert json_shape_problem(data, max_values=exact - 1) is not None
        assert exact < MAX_DOCUMENT_VALUES // 100  # the bundled registry's are all far under either cap
