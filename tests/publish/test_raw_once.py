"""Each raw byte is published once. GitHub's Pages artifact counts every path, a hard link as a copy
(upload-pages-artifact tars with ``--dereference --hard-dereference``), so a skill whose files discovery v0.1 lists
has one raw copy of each, under .well-known/skills/<name>/, which its detail document's ``raw`` names and every
reader follows; api/v1/skills/<name>/files/ holds the raw copies of skills v0.1 leaves out (a file kept to the
archives) and of registries that turn v0.1 off. Switching the setting moves the copies and leaves none behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import jsonschema
from helpers import write_tree
from helpers.active import KEPT, NAME, RAW, active_registry
from helpers.build import all_files, build_of, detail_of, git, make_registry
from helpers.client import old_builder
from helpers.site import broken_links, read_page

from builder.core.config import load_config
from builder.core.urls import WELL_KNOWN_V1, raw_path
from builder.publish.build import BuildOptions, build
from builder.publish.schemas import load_schema

BASE = "https://skill-registry.github.io/skill-registry/"  # the repository's registry.yaml
LINKER = {
    "skills/linker/SKILL.md": """---
name: linker
description: Links its own files from its body, for the raw placement tests.
metadata:
  category: documentation
  tags: docs
  version: 1.0.0
---
# Linker

Read [the guide](references/guide.md), run [it](scripts/run.sh).

![diagram](assets/diagram.png)
""",
    "skills/linker/references/guide.md": "# Guide\n",
    "skills/linker/scripts/run.sh": "#!/bin/sh\necho run\n",
    "skills/linker/assets/diagram.png": b"\x89PNG\r\n\x1a\n-diagram",
}
LINKED = {"references/guide.md", "scripts/run.sh", "assets/diagram.png"}
OFF = "publish:\n  well_known_skills: false\n"
TWO_COPIES_COMMIT = "eae1f75"  # main while a default build still wrote files/ beside .well-known/skills/
LAUNCHER = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import builder; "
            "assert builder.__file__.startswith(sys.path[0]), builder.__file__; "
            "from builder.cli.app import main; main()")


def registry(root: Path) -> Path:
    make_registry(root, ["csv-profiler"], commit=False)
    write_tree(root, LINKER)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def set_publish(root: Path, publish: str) -> None:
    text = (root / "registry.yaml").read_text(encoding="utf-8").split("\npublish:\n")[0].rstrip("\n") + "\n"
    (root / "registry.yaml").write_text(text + ("\n" + publish if publish else ""), encoding="utf-8")
    git(root, "commit", "-q", "-am", "publish settings")


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def assert_raw_copies_in(out: Path, root: Path, name: str, well_known: bool) -> None:
    """Every file of ``name`` has its one raw copy where the setting puts it, named by the detail document, with
    the source's bytes, and nothing of it is under the other place."""
    detail = detail_of(out, name)
    jsonschema.validate(detail, load_schema("detail"))
    folder = root / "skills" / name
    sources = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    for f in detail["files"]:
        place = f"{WELL_KNOWN_V1}/{name}/{f['path']}" if well_known else raw_path(name, f["path"])
        assert (f["raw"], f["url"]) == (place, BASE + place)
        assert (out / place).read_bytes() == sources[f["path"]]
    assert files_under(out / WELL_KNOWN_V1 / name) == (set(sources) if well_known else set())
    assert files_under(out / f"api/v1/skills/{name}/files") == (set() if well_known else set(sources))


def assert_pages_link_the_copies(out: Path, prefix: str) -> None:
    """The linker's page (its body and its file tree) links each linked file where its raw copy is, and every
    internal link of the website lands on a file."""
    page = read_page(out / "skills/linker/index.html")
    assert {unquote(h.removeprefix(prefix)) for h in page.links_to(prefix)} >= LINKED
    assert ("img", {"src": prefix + "assets/diagram.png", "alt": "diagram"}) in page.tags
    other = "../../api/v1/skills/linker/files/" if prefix.startswith("../../.well-known") else "../../.well-known/"
    assert not page.links_to(other)
    assert broken_links(out, BASE) == []


def test_default_settings_publish_one_raw_copy_under_discovery_v01(tmp_path: Path) -> None:
    root = registry(tmp_path / "registry")
    out = build_of(root, tmp_path / "out", site=True)
    for name in ("csv-profiler", "linker"):
        assert_raw_copies_in(out, root, name, well_known=True)
    assert_pages_link_the_copies(out, "../../.well-known/skills/linker/")
    v1 = json.loads((out / WELL_KNOWN_V1 / "index.json").read_bytes())
    assert {s["name"]: set(s["files"]) for s in v1["skills"]}["linker"] == LINKED | {"SKILL.md"}
    # No path of the output is a second name of another one's bytes (a hard link the Pages artifact counts twice).
    inodes = [(s.st_dev, s.st_ino) for p in out.rglob("*") if p.is_file() for s in [p.lstat()]]
    assert len(inodes) == len(set(inodes))


def test_without_discovery_v01_the_raw_copies_are_under_files(tmp_path: Path) -> None:
    root = registry(tmp_path / "registry")
    set_publish(root, OFF)
    out = build_of(root, tmp_path / "out", site=True)
    assert not (out / WELL_KNOWN_V1).exists()
    for name in ("csv-profiler", "linker"):
        assert_raw_copies_in(out, root, name, well_known=False)
    assert_pages_link_the_copies(out, "../../api/v1/skills/linker/files/")


def test_switching_discovery_v01_moves_the_copies_and_a_rebuild_equals_a_fresh_build(tmp_path: Path) -> None:
    root = registry(tmp_path / "registry")
    out = build_of(root, tmp_path / "out", site=True)
    for step, (publish, well_known) in enumerate([(OFF, False), ("", True)]):
        set_publish(root, publish)
        result = build(load_config(root / "registry.yaml"), out, BuildOptions(site=True))
        assert sorted(result.written) == ["csv-profiler", "linker"]
        for name in ("csv-profiler", "linker"):
            assert_raw_copies_in(out, root, name, well_known)  # and none left where the last build put them
        prefix = "../../.well-known/skills/linker/" if well_known else "../../api/v1/skills/linker/files/"
        assert_pages_link_the_copies(out, prefix)
        assert all_files(out) == all_files(build_of(root, tmp_path / f"fresh-{step}", site=True)), publish


def test_a_rebuild_reuses_an_unchanged_skills_one_copy(tmp_path: Path) -> None:
    root = registry(tmp_path / "registry")
    out = build_of(root, tmp_path / "out", site=False)
    kept = out / WELL_KNOWN_V1 / "csv-profiler/SKILL.md"
    inode = kept.stat().st_ino
    (root / "skills/linker/references/guide.md").write_text("# Guide, edited\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "edit the guide")
    result = build(load_config(root / "registry.yaml"), out, BuildOptions(site=False))
    assert (result.written, result.reused) == (("linker",), ("csv-profiler",))
    assert kept.stat().st_ino == inode
    for name in ("csv-profiler", "linker"):
        assert_raw_copies_in(out, root, name, well_known=True)
    assert all_files(out) == all_files(build_of(root, tmp_path / "fresh", site=False))


def test_a_skill_discovery_v01_leaves_out_keeps_its_raw_copies_under_files(tmp_path: Path) -> None:
    """A skill with a file kept to the archives (SK517) is not in v0.1; its other files are raw under files/, and
    a page type is raw in neither place."""
    root = active_registry(tmp_path / "registry")
    out = tmp_path / "out"
    build(load_config(root / "registry.yaml"), out, BuildOptions(site=False))
    rows = {f["path"]: f for f in detail_of(out, NAME)["files"]}
    assert {p: f["raw"] for p, f in rows.items() if "raw" in f} == {p: raw_path(NAME, p) for p in RAW}
    assert files_under(out / f"api/v1/skills/{NAME}/files") == RAW
    assert not (out / WELL_KNOWN_V1 / NAME).exists()
    plain = {f["path"]: f["raw"] for f in detail_of(out, "plain")["files"]}
    assert plain == {p: f"{WELL_KNOWN_V1}/plain/{p}" for p in plain}
    assert not (out / "api/v1/skills/plain/files").exists()
    for path in KEPT:
        assert "raw" not in rows[path] and not (out / raw_path(NAME, path)).exists(), path


def test_an_output_built_with_two_copies_is_rebuilt_with_one(tmp_path: Path) -> None:
    """The first build after the upgrade reuses no skill of an output that still has files/ beside .well-known."""
    root = registry(tmp_path / "registry")
    out = tmp_path / "out"
    old = old_builder(tmp_path, TWO_COPIES_COMMIT)
    done = subprocess.run([sys.executable, "-c", LAUNCHER, str(old), "build", "--no-site", "--out", str(out)],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (out / raw_path("linker", "SKILL.md")).is_file() and (out / WELL_KNOWN_V1 / "linker/SKILL.md").is_file()
    result = build(load_config(root / "registry.yaml"), out, BuildOptions(site=False))
    assert (sorted(result.written), result.reused) == (["csv-profiler", "linker"], ())
    for name in ("csv-profiler", "linker"):
        assert_raw_copies_in(out, root, name, well_known=True)
    assert all_files(out) == all_files(build_of(root, tmp_path / "fresh", site=False))
