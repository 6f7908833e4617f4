"""skillreg build: layout, schemas, reproducibility, provenance, incremental and atomic output."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.build import SKILLS, all_files, git, make_registry

from builder.cli.app import cli
from builder.core.config import load_config
from builder.core.urls import scoped_discovery_path
from builder.publish.build import BuildFailed, BuildOptions, build
from builder.publish.schemas import PUBLISHED, load_schema


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "repo")


def test_layout_and_every_document_matches_its_schema(registry: Path) -> None:
    out = registry / "site"
    result = build(load_config(registry / "registry.yaml"), out, BuildOptions(site=False))
    assert sorted(result.published) == sorted(SKILLS)
    index = json.loads((out / "api/v1/index.json").read_text())
    jsonschema.validate(index, load_schema("index"))
    assert index["count"] == len(SKILLS)
    assert [s["name"] for s in index["skills"]] == sorted(SKILLS)
    head = git(registry, "rev-parse", "HEAD").strip()
    assert index["source"] == {"repository": "https://github.com/skill-registry/skill-registry", "commit": head,
                               "time": "2026-01-02T03:04:05Z"}
    assert "body" not in json.dumps(index["skills"])
    for name in SKILLS:
        detail = json.loads((out / f"api/v1/skills/{name}.json").read_text())
        jsonschema.validate(detail, load_schema("detail"))
        bundle = json.loads((out / detail["bundles"]["json"]["path"]).read_text())
        jsonschema.validate(bundle, load_schema("bundle"))
        assert detail["provenance"]["created"] == "2026-01-02T03:04:05Z"
        assert detail["provenance"]["authors"] == ["Ada Lovelace"]
        assert detail["provenance"]["source_path"] == f"skills/{name}"
        for f in detail["files"]:  # one raw copy of each file, discovery v0.1's, which the detail points at
            assert f["raw"] == f".well-known/skills/{name}/{f['path']}"
            assert hashlib.sha256((out / f["raw"]).read_bytes()).hexdigest() == f["sha256"]
        assert not (out / f"api/v1/skills/{name}/files").exists()
    jsonschema.validate(json.loads((out / ".well-known/skills/index.json").read_text()), load_schema("discovery-v1"))
    v2 = json.loads((out / ".well-known/agent-skills/index.json").read_text())
    jsonschema.validate(v2, load_schema("discovery-v2"))
    for entry in v2["skills"]:  # the v0.2 digest is the artifact's own SHA-256, its URL relative to the index
        archive = (out / ".well-known/agent-skills" / entry["url"]).resolve()
        assert entry["digest"] == "sha256:" + hashlib.sha256(archive.read_bytes()).hexdigest()
        # The same entry, alone, in the skill's own folder (``skills add <registry>/api/v1/skills/<name>``).
        scoped_path = out / scoped_discovery_path(entry["name"])
        scoped = json.loads(scoped_path.read_text())
        jsonschema.validate(scoped, load_schema("discovery-v2"))
        [alone] = scoped["skills"]
        assert (scoped_path.parent / alone["url"]).resolve() == archive
        assert {**alone, "url": entry["url"]} == entry
    assert (out / ".nojekyll").read_bytes() == b""
    for name in PUBLISHED:
        assert json.loads((out / f"api/v1/schema/{name}.schema.json").read_text()) == load_schema(name)


def test_installing_a_bundle_reproduces_every_file(registry: Path, tmp_path: Path) -> None:
    out = registry / "site"
    build(load_config(registry / "registry.yaml"), out, BuildOptions(site=False))
    for name in SKILLS:
        detail = json.loads((out / f"api/v1/skills/{name}.json").read_text())
        data = (out / detail["bundles"]["zip"]["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == detail["bundles"]["zip"]["sha256"]
        assert len(data) == detail["bundles"]["zip"]["size"]
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
        assert names[0] == "SKILL.md" and names[1:] == sorted(names[1:])
        target = tmp_path / "installed" / name
        archive.extractall(target)
        for f in detail["files"]:
            info = archive.getinfo(f["path"])
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert (info.external_attr >> 16) & 0o777 == (0o755 if f["executable"] else 0o644)
            assert hashlib.sha256((target / f["path"]).read_bytes()).hexdigest() == f["sha256"]
        # the digest as DESIGN.md defines it
        lines = b"".join(f["path"].encode() + b"\0" + f["sha256"].encode() + b"\n"
                         for f in sorted(detail["files"], key=lambda f: f["path"].encode()))
        assert detail["digest"] == "sha256:" + hashlib.sha256(lines).hexdigest()
        assert detail["bundles"]["zip"]["path"].endswith(f"{name}-{detail['digest'][7:19]}.zip")


def test_two_builds_of_one_commit_are_byte_identical(registry: Path, tmp_path: Path) -> None:
    config = load_config(registry / "registry.yaml")
    build(config, tmp_path / "one", BuildOptions(site=False))
    build(config, tmp_path / "two", BuildOptions(site=False, jobs=2))
    assert all_files(tmp_path / "one") == all_files(tmp_path / "two")


def test_outside_git_provenance_is_empty_not_invented(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "plain", commit=False)
    result = build(load_config(root / "registry.yaml"), root / "site", BuildOptions(site=False))
    assert result.commit is None
    index = json.loads((root / "site/api/v1/index.json").read_text())
    assert index["source"]["commit"] is None and index["source"]["time"] is None
    detail = json.loads((root / "site/api/v1/skills/csv-profiler.json").read_text())
    assert detail["provenance"]["created"] is None and detail["provenance"]["authors"] == []


def test_git_history_gives_created_updated_and_authors(registry: Path) -> None:
    skill_md = registry / "skills/csv-profiler/SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nOne more line.\n")
    git(registry, "commit", "-qam", "edit", date="2026-03-04T05:06:07Z", author="Grace Hopper")
    build(load_config(registry / "registry.yaml"), registry / "site", BuildOptions(site=False))
    detail = json.loads((registry / "site/api/v1/skills/csv-profiler.json").read_text())
    prov = detail["provenance"]
    assert (prov["created"], prov["updated"]) == ("2026-01-02T03:04:05Z", "2026-03-04T05:06:07Z")
    assert prov["authors"] == ["Ada Lovelace", "Grace Hopper"]
    assert prov["commit"] == git(registry, "rev-parse", "HEAD").strip()
    other = json.loads((registry / "site/api/v1/skills/secret-scanner.json").read_text())["provenance"]
    assert other["updated"] == "2026-01-02T03:04:05Z"


def test_a_validation_error_writes_nothing_and_keeps_the_previous_output(registry: Path) -> None:
    config = load_config(registry / "registry.yaml")
    out = registry / "site"
    build(config, out, BuildOptions(site=False))
    before = all_files(out)
    (registry / "skills/secret-scanner/SKILL.md").write_text("---\nname: Wrong\ndescription: x\n---\nbody\n")
    with pytest.raises(BuildFailed) as failed:
        build(config, out, BuildOptions(site=False))
    assert {d.code for d in failed.value.report.diagnostics} >= {"SK104", "SK106"}
    assert all_files(out) == before
    assert not [p for p in registry.iterdir() if p.name.startswith(".site.tmp")]


def test_keep_going_leaves_invalid_skills_out_and_lists_them(registry: Path) -> None:
    (registry / "skills/secret-scanner/SKILL.md").write_text("---\nname: secret-scanner\n---\nbody\n")
    result = build(load_config(registry / "registry.yaml"), registry / "site", BuildOptions(site=False, keep_going=True))
    assert result.skipped == ("skills/secret-scanner",)
    assert not (registry / "site/api/v1/skills/secret-scanner.json").exists()
    assert not (registry / "site/.well-known/skills/secret-scanner").exists()
    names = [s["name"] for s in json.loads((registry / "site/api/v1/index.json").read_text())["skills"]]
    assert names == sorted(set(SKILLS) - {"secret-scanner"})


def test_rebuild_after_one_change_rewrites_that_skill_only_and_drops_removed_ones(registry: Path) -> None:
    config = load_config(registry / "registry.yaml")
    out = registry / "site"
    build(config, out, BuildOptions(site=False))
    untouched = out / ".well-known/skills/csv-profiler/SKILL.md"
    inode = untouched.stat().st_ino
    old_detail = json.loads((out / "api/v1/skills/secret-scanner.json").read_text())
    md = registry / "skills/secret-scanner/SKILL.md"
    md.write_text(md.read_text() + "\nAn added line.\n")
    shutil.rmtree(registry / "skills/changelog-from-git")
    result = build(config, out, BuildOptions(site=False))
    assert result.written == ("secret-scanner",)
    assert result.reused == ("csv-profiler",)
    assert untouched.stat().st_ino == inode  # linked from the previous output, not written again
    new_detail = json.loads((out / "api/v1/skills/secret-scanner.json").read_text())
    assert new_detail["digest"] != old_detail["digest"]
    assert (out / old_detail["bundles"]["zip"]["path"]).exists()  # the committed version stays published
    assert not (out / old_detail["bundles"]["json"]["path"]).exists()  # only the newest has the other copies
    assert (out / new_detail["bundles"]["zip"]["path"]).exists()
    assert not (out / "api/v1/skills/changelog-from-git.json").exists()
    assert (out / "api/v1/skills/changelog-from-git/versions.json").exists()  # it leaves the index, not history
    assert not (out / ".well-known/skills/changelog-from-git").exists()
    fresh = registry / "fresh"
    build(config, fresh, BuildOptions(site=False))
    assert all_files(out) == all_files(fresh)


def test_refuses_to_replace_a_folder_that_is_not_a_build(registry: Path) -> None:
    write_tree(registry / "docs", {"notes.txt": "keep me"})
    result = CliRunner().invoke(cli, ["--config", str(registry / "registry.yaml"), "build", "--out",
                                      str(registry / "docs")])
    assert result.exit_code == 2
    assert "is not empty and holds no previous build; refusing to replace it" in result.output
    assert (registry / "docs/notes.txt").read_text() == "keep me"


def test_cli_build_reports_findings_and_exit_code(registry: Path) -> None:
    (registry / "skills/csv-profiler/SKILL.md").write_text("---\nname: csv-profiler\n---\nbody\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["--config", str(registry / "registry.yaml"), "build", "--no-site",
                                 "--out", str(registry / "out")])
    assert result.exit_code == 1
    assert "error SK107 required field `description` is missing" in result.output
    assert "Error: the build stopped: 1 error, " in result.output
    assert not (registry / "out").exists()
    assert "Traceback" not in result.output


def test_a_commit_interrupted_part_way_leaves_the_previous_output(registry: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from builder.publish import transaction as build_module

    config = load_config(registry / "registry.yaml")
    out = registry / "site"
    build(config, out, BuildOptions(site=False))
    before = all_files(out)
    md = registry / "skills/secret-scanner/SKILL.md"
    md.write_text(md.read_text() + "\nAn added line.\n")
    real_rename, renames = os.rename, []

    def interrupted(src: object, dst: object) -> None:
        renames.append(src)
        if len(renames) == 5:  # part way through moving the units into place
            raise KeyboardInterrupt
        real_rename(src, dst)

    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):  # undo() would restore HOME too
        patched.setattr(build_module.os, "rename", interrupted)
        build(config, out, BuildOptions(site=False))
    assert all_files(out) == before
    assert not build_module.output_place(out).journal.exists()
    result = build(config, out, BuildOptions(site=False))
    assert result.written == ("secret-scanner",)
    fresh = registry / "fresh"
    build(config, fresh, BuildOptions(site=False))
    assert all_files(out) == all_files(fresh)


def test_a_journal_left_by_a_killed_build_is_rolled_back_first(registry: Path) -> None:
    from builder.publish.transaction import JOURNAL_VERSION, output_place, recover

    config = load_config(registry / "registry.yaml")
    out = registry / "site"
    build(config, out, BuildOptions(site=False))
    before = all_files(out)
    # What a process killed after moving one unit aside and one new unit in leaves behind.
    place = output_place(out)
    tmp, backup = place.fresh("tmp"), place.fresh("backup")
    unit = "api/v1/skills/csv-profiler.json"
    (backup / unit).parent.mkdir(parents=True)
    os.rename(out / unit, backup / unit)
    (out / unit).write_text("half-built")
    place.journal.write_text(json.dumps({"version": JOURNAL_VERSION, "out": str(out), "tmp": tmp.name,
                                         "backup": backup.name, "state": "prepared",
                                         "units": [{"path": unit, "had_old": True, "has_new": True},
                                                   {"path": "api/v1/new", "had_old": False, "has_new": True}]}))
    assert recover(out) is True
    assert all_files(out) == before
    assert not backup.exists() and not place.journal.exists()


def test_a_new_commit_without_skill_changes_keeps_the_cache(registry: Path) -> None:
    config = load_config(registry / "registry.yaml")
    out = registry / "site"
    build(config, out, BuildOptions(site=False))
    (registry / "NOTES.md").write_text("not a skill\n")
    git(registry, "add", "NOTES.md")
    git(registry, "commit", "-qm", "notes", date="2026-05-06T07:08:09Z")
    result = build(config, out, BuildOptions(site=False))
    assert result.written == ()
    index = json.loads((out / "api/v1/index.json").read_text())
    assert index["source"]["commit"] == git(registry, "rev-parse", "HEAD").strip()
    assert build(config, out, BuildOptions(site=False)).written == ()
