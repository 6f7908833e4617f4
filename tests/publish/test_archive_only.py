"""A skill's files a browser would run as pages (HTML, SVG, XHTML, XML...) travel in its archives only: the build never
writes them as raw files on the registry's origin, the detail document lists them without a URL, and the skill is
left out of the discovery v0.1 index (whose clients fetch every file raw) while v0.2 offers its archive. The browser
tests in tests/site/test_site_browser.py load what this publishes."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from helpers.active import ACTIVE, KEPT, NAME, RAW, active_registry

from builder.cli.app import cli
from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from builder.publish.schemas import load_schema


def run_build(root: Path, out: Path) -> None:
    build(load_config(root / "registry.yaml"), out, BuildOptions(site=False))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def zip_names(data: bytes) -> set[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return set(archive.namelist())


def published(out: Path) -> set[str]:
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}


def test_a_skill_with_pages_is_published_and_its_pages_are_in_its_archives_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = active_registry(tmp_path / "registry")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["build", "--no-site", "--verbose", "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert result.output.count("warning SK517") == len(KEPT)
    out = tmp_path / "site"
    files = published(out)

    every = {p.relative_to(ACTIVE).as_posix() for p in ACTIVE.rglob("*") if p.is_file()}
    assert every == KEPT | RAW
    raw = {f[len(f"api/v1/skills/{NAME}/files/"):] for f in files if f.startswith(f"api/v1/skills/{NAME}/files/")}
    assert raw == RAW
    assert not any(f.startswith(f".well-known/skills/{NAME}/") for f in files)

    detail = read_json(out / f"api/v1/skills/{NAME}.json")
    jsonschema.validate(detail, load_schema("detail"))
    rows = {row["path"]: row for row in detail["files"]}
    assert rows.keys() == every
    for path in KEPT:
        assert rows[path].get("archive_only") is True and "raw" not in rows[path] and "url" not in rows[path], path
    for path in RAW:
        assert "archive_only" not in rows[path] and (out / rows[path]["raw"]).read_bytes() == (ACTIVE / path).read_bytes()

    # Every archive holds every file: the zip, the JSON bundle, and the one discovery v0.2 names.
    zipped = (out / detail["bundles"]["zip"]["path"]).read_bytes()
    assert zip_names(zipped) == every
    assert {f["path"] for f in read_json(out / detail["bundles"]["json"]["path"])["files"]} == every
    for index in (".well-known/agent-skills/index.json", f"api/v1/skills/{NAME}/.well-known/agent-skills/index.json"):
        (entry,) = [s for s in read_json(out / index)["skills"] if s["name"] == NAME]
        assert (out / index).parent.joinpath(entry["url"]).resolve().read_bytes() == zipped

    v1 = read_json(out / ".well-known/skills/index.json")
    jsonschema.validate(v1, load_schema("discovery-v1"))
    assert [s["name"] for s in v1["skills"]] == ["plain"]
    for skill in v1["skills"]:  # every file the v0.1 index lists is there to fetch
        assert all((out / ".well-known/skills" / skill["name"] / path).is_file() for path in skill["files"])
    assert NAME in {s["name"] for s in read_json(out / "api/v1/index.json")["skills"]}
    shard = read_json(out / read_json(out / "api/v1/skills-manifest.json")["shards"][0]["path"])
    assert {f["path"] for f in next(s for s in shard["skills"] if s["name"] == NAME)["files"]} == every


def test_a_linked_page_is_not_published_raw_under_raw_files_linked(tmp_path: Path) -> None:
    root = active_registry(tmp_path / "registry", "title: Lean\npublish:\n  raw_files: linked\n")
    out = tmp_path / "site"
    run_build(root, out)
    rows = {row["path"]: row for row in read_json(out / f"api/v1/skills/{NAME}.json")["files"]}
    # SKILL.md links the diagram, the report and main.rs: only main.rs gets a raw copy.
    assert {p for p, row in rows.items() if "raw" in row} == {"src/main.rs"}
    assert rows["assets/evil.html"]["archive_only"] is True
    assert not (out / f"api/v1/skills/{NAME}/files/assets/evil.html").exists()


def test_adding_a_page_takes_a_skill_out_of_discovery_v01_and_removing_it_brings_it_back(tmp_path: Path) -> None:
    root = active_registry(tmp_path / "registry")
    shutil.rmtree(root / "skills" / NAME)
    out = tmp_path / "site"
    run_build(root, out)
    assert (out / ".well-known/skills/plain/notes.md").is_file()

    (root / "skills/plain/viewer.html").write_text("<!doctype html><script>document.title = 'x'</script>\n")
    run_build(root, out)  # an HTML viewer, as Anthropic's skill-creator ships: published, not refused
    detail = read_json(out / "api/v1/skills/plain.json")
    assert "viewer.html" in zip_names((out / detail["bundles"]["zip"]["path"]).read_bytes())
    assert [s["name"] for s in read_json(out / "api/v1/index.json")["skills"]] == ["plain"]
    assert read_json(out / ".well-known/skills/index.json")["skills"] == []
    assert not (out / ".well-known/skills/plain").exists()
    assert not (out / "api/v1/skills/plain/files/viewer.html").exists()
    assert (out / "api/v1/skills/plain/files/notes.md").is_file()

    (root / "skills/plain/viewer.html").unlink()
    run_build(root, out)
    assert [s["name"] for s in read_json(out / ".well-known/skills/index.json")["skills"]] == ["plain"]
    assert (out / ".well-known/skills/plain/notes.md").is_file()
    assert not (out / "api/v1/skills/plain/files").exists()  # its one raw copy moved back to discovery v0.1's


def test_a_rebuild_that_reuses_the_skill_keeps_it_out_of_discovery_v01(tmp_path: Path) -> None:
    """The build record keeps a skill's place in each index; a left-out row is kept as left out, not as missing."""
    root = active_registry(tmp_path / "registry")
    out = tmp_path / "site"
    run_build(root, out)
    (root / "skills/plain/notes.md").write_text("# Notes, changed\n")
    run_build(root, out)
    assert [s["name"] for s in read_json(out / ".well-known/skills/index.json")["skills"]] == ["plain"]
    assert not (out / f".well-known/skills/{NAME}").exists()
    assert NAME in {s["name"] for s in read_json(out / ".well-known/agent-skills/index.json")["skills"]}
