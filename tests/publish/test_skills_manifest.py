"""The sharded skill manifest: each row is what the skill's detail document says, a rebuild keeps it so, and an
unchanged shard is not written again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from helpers.build import SKILLS, all_files, make_registry

from builder.core.config import load_config
from builder.core.model import sha256_hex
from builder.core.urls import SKILLS_MANIFEST_PATH
from builder.publish import skills_manifest
from builder.publish.build import BuildOptions, build
from builder.publish.schemas import load_schema


def rows(out: Path) -> list[dict[str, object]]:
    index = json.loads((out / SKILLS_MANIFEST_PATH).read_text())
    jsonschema.validate(index, load_schema("skills-manifest"))
    found = []
    for shard in index["shards"]:
        data = (out / shard["path"]).read_bytes()
        assert sha256_hex(data) == shard["sha256"] and len(data) == shard["size"]
        doc = json.loads(data)
        jsonschema.validate(doc, load_schema("skills-manifest-shard"))
        assert [doc["skills"][0]["name"], doc["skills"][-1]["name"]] == [shard["first"], shard["last"]]
        assert len(doc["skills"]) == shard["count"] <= index["shard_size"]
        found += doc["skills"]
    assert index["count"] == len(found)
    return found


def expected(out: Path, name: str) -> dict[str, object]:
    detail = json.loads((out / f"api/v1/skills/{name}.json").read_text())
    return {"name": name, "digest": detail["digest"], "skill_md": detail["skill_md"],
            "frontmatter": detail["frontmatter"],
            "files": [{"path": f["path"], "sha256": f["sha256"], "size": f["size"]} for f in detail["files"]]}


def test_every_row_is_what_the_detail_document_says_through_rebuilds(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skills_manifest, "SHARD_SIZE", 2)
    registry = make_registry(tmp_path / "repo")
    config = load_config(registry / "registry.yaml")
    out = registry / "site"
    build(config, out, BuildOptions(site=False))
    assert rows(out) == [expected(out, name) for name in sorted(SKILLS)]
    shards = {p.name: p.stat().st_ino for p in (out / "api/v1/skills-manifest").iterdir()}
    assert len(shards) == 2

    md = registry / "skills/secret-scanner/SKILL.md"  # in the second shard of two
    md.write_text(md.read_text() + "\nAn added line.\n")
    build(config, out, BuildOptions(site=False))
    assert rows(out) == [expected(out, name) for name in sorted(SKILLS)]
    after = {p.name: p.stat().st_ino for p in (out / "api/v1/skills-manifest").iterdir()}
    assert len(after) == 2 and len(set(after) & set(shards)) == 1  # the other shard is the same file
    kept = (set(after) & set(shards)).pop()
    assert after[kept] == shards[kept]

    shutil.rmtree(registry / "skills/changelog-from-git")
    build(config, out, BuildOptions(site=False))
    assert rows(out) == [expected(out, name) for name in sorted(set(SKILLS) - {"changelog-from-git"})]
    assert len(list((out / "api/v1/skills-manifest").iterdir())) == 1
    fresh = registry / "fresh"
    build(config, fresh, BuildOptions(site=False))
    assert all_files(out) == all_files(fresh)


def test_a_rebuild_of_the_same_skills_reads_only_the_shards_holding_a_built_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skills_manifest, "SHARD_SIZE", 2)
    registry = make_registry(tmp_path / "repo")
    config = load_config(registry / "registry.yaml")
    out = registry / "site"
    build(config, out, BuildOptions(site=False))
    read: list[str] = []
    real_loads = json.loads

    def loads(data: str | bytes) -> object:
        doc = real_loads(data)
        if isinstance(doc, dict) and "skills" in doc and "count" not in doc:
            read.append(doc["skills"][0]["name"])
        return doc

    def whole(_: Path) -> object:
        raise AssertionError("every shard was read")

    md = registry / "skills/secret-scanner/SKILL.md"  # in the second shard of two
    md.write_text(md.read_text() + "\nAn added line.\n")
    with monkeypatch.context() as patched:
        patched.setattr(skills_manifest, "_previous_shards", whole)
        patched.setattr(skills_manifest.json, "loads", loads)
        build(config, out, BuildOptions(site=False))
    assert read == ["secret-scanner"]
    fresh = registry / "fresh"
    build(config, fresh, BuildOptions(site=False))
    assert all_files(out) == all_files(fresh)

    index = out / SKILLS_MANIFEST_PATH  # an index that is not the one recorded: every shard is read again
    index.write_bytes(index.read_bytes().replace(b'"count"', b' "count"', 1))
    md.write_text(md.read_text() + "\nAnother line.\n")
    build(config, out, BuildOptions(site=False))
    shutil.rmtree(fresh)
    build(config, fresh, BuildOptions(site=False))
    assert rows(out) == [expected(out, name) for name in sorted(SKILLS)]
    assert all_files(out) == all_files(fresh)
