"""registry.yaml's ``publish:`` section: which copies of each skill's files a build writes, and that every reader
we know of (our client old and new, MCP, the agent-skills v0.2 index, the website's links) keeps working on a
lean build that writes only the zip, the files SKILL.md links to, and the documents."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import REPO, write_tree
from helpers.build import SKILLS, all_files, build_of, detail_of, git, make_registry
from helpers.client import RegistryServer, mcp_session, old_builder, run, tree

from builder.cli.app import cli
from builder.core.bundle import dumps
from builder.core.config import Publish, load_config
from builder.core.errors import ConfigError
from builder.core.urls import WELL_KNOWN_V1, WELL_KNOWN_V2, raw_path
from builder.publish.api import linked_files
from builder.publish.build import BuildOptions, build
from builder.publish.schemas import load_schema
from builder.site.render import BodyRenderer
from builder.validate.run import validate_folder

LEAN = "publish:\n  raw_files: linked\n  json_bundles: false\n  well_known_skills: false\n"
OLD_CLIENT_COMMIT = "5162477"  # main before the publish: section
LAUNCHER = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import builder; "
            "assert builder.__file__.startswith(sys.path[0]), builder.__file__; "
            "from builder.cli.app import main; main()")
# A skill whose body reaches its files in every way CommonMark and raw HTML allow, plus files it never names.
LINKS_MD = """---
name: link-kinds
description: Shows every kind of link a body can hold, for the publish tests.
metadata:
  category: documentation
  tags: docs
  version: 1.0.0
---
# Link kinds

Read [the guide](references/guide.md#start) first, then [notes](./references/notes%20one.md).

![diagram](assets/diagram.png)

Run `{baseDir}/scripts/run.sh` or open [it]({baseDir}/scripts/run.sh).

See [the template][tpl] and <a href="assets/form.md">the form</a>, <img src="assets/logo.png" alt="logo">.

External: [docs](https://example.com/x), [top](#link-kinds), [folder](references/).

[tpl]: assets/template.md
"""
LINKS_FILES: dict[str, str | bytes] = {
    "skills/link-kinds/SKILL.md": LINKS_MD,
    "skills/link-kinds/references/guide.md": "# Guide\n",
    "skills/link-kinds/references/notes one.md": "# Notes\n",
    "skills/link-kinds/references/unlinked.md": "# Never linked\n",
    "skills/link-kinds/assets/diagram.png": b"\x89PNG\r\n\x1a\n-diagram",
    "skills/link-kinds/assets/logo.png": b"\x89PNG\r\n\x1a\n-logo",
    "skills/link-kinds/assets/template.md": "template\n",
    "skills/link-kinds/assets/form.md": "form\n",
    "skills/link-kinds/scripts/run.sh": "#!/bin/sh\necho run\n",
    "skills/link-kinds/scripts/other.sh": "#!/bin/sh\necho other\n",
}
LINKED = {"references/guide.md", "references/notes one.md", "assets/diagram.png", "assets/logo.png",
          "assets/template.md", "assets/form.md", "scripts/run.sh"}


def registry(root: Path, publish: str = "", names: list[str] = SKILLS, extra: bool = True) -> Path:
    """A git repository holding this repository's registry.yaml (plus ``publish``) and a few skills."""
    make_registry(root, names, commit=False)
    if extra:
        write_tree(root, LINKS_FILES)
        (root / "skills/link-kinds/scripts/run.sh").chmod(0o755)
    set_publish(root, publish, commit=False)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def set_publish(root: Path, publish: str, commit: bool = True) -> None:
    text = (REPO / "registry.yaml").read_text(encoding="utf-8")
    (root / "registry.yaml").write_text(text.rstrip("\n") + "\n" + publish, encoding="utf-8")
    if commit:
        git(root, "commit", "-q", "-am", "publish settings")


def source_tree(root: Path, name: str) -> dict[str, bytes]:
    folder = root / "skills" / name
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------- registry.yaml

def test_without_a_publish_section_every_copy_is_published() -> None:
    assert load_config(REPO / "registry.yaml").publish == Publish("all", True, True, "inline")


@pytest.mark.parametrize(("section", "message"), [
    ("publish:\n  raw_file: linked\n",
     "registry.yaml:3: unknown key `publish.raw_file`; did you mean `raw_files`? known: raw_files, json_bundles, "
     "well_known_skills, page_body, host_limit"),
    ("publish:\n  zips: false\n", "registry.yaml:3: unknown key `publish.zips`; known: raw_files, json_bundles, "
                                  "well_known_skills, page_body, host_limit"),
    ("publish:\n  raw_files: some\n", "registry.yaml:3: `publish.raw_files` must be all or linked, got 'some'"),
    ("publish:\n  raw_files: true\n", "registry.yaml:3: `publish.raw_files` must be all or linked, got True"),
    ("publish:\n  json_bundles: no thanks\n",
     "registry.yaml:3: `publish.json_bundles` must be true or false, got 'no thanks'"),
    ("publish:\n  raw_files: linked\n  well_known_skills: 0\n",
     "registry.yaml:4: `publish.well_known_skills` must be true or false, got 0"),
    ("publish: lean\n", "registry.yaml:2: `publish` must be a mapping such as `raw_files: linked`, got 'lean'"),
])
def test_a_bad_publish_section_names_registry_yaml_and_the_line(tmp_path: Path, section: str, message: str) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text("title: T\n" + section)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{tmp_path}/{message}"
    result = CliRunner().invoke(cli, ["--config", str(path), "build", "--out", str(tmp_path / "out")])
    assert (result.exit_code, result.output) == (1, f"Error: {tmp_path}/{message}\n")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------ what is written

@pytest.fixture(scope="module")
def lean_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(registry, output) of a lean build, website included."""
    base = tmp_path_factory.mktemp("lean")
    root = registry(base / "registry", LEAN)
    return root, build_of(root, base / "out", site=True)


def test_a_lean_build_writes_the_zip_the_linked_files_and_no_other_copy(lean_build: tuple[Path, Path]) -> None:
    root, out = lean_build
    schema = load_schema("detail")
    assert not (out / WELL_KNOWN_V1).exists()
    assert not list((out / "api/v1/bundles").rglob("*.json"))
    for name in [*SKILLS, "link-kinds"]:
        skill, _ = validate_folder(root / "skills" / name, load_config(root / "registry.yaml"), "spec")
        linked = linked_files(skill)
        detail = detail_of(out, name)
        jsonschema.validate(detail, schema)
        assert set(detail["bundles"]) == {"zip"}
        with_raw = {f["path"] for f in detail["files"] if "raw" in f}
        assert with_raw == linked and "SKILL.md" not in with_raw
        for f in detail["files"]:
            assert ("url" in f) == ("raw" in f)
        files_dir = out / "api/v1/skills" / name / "files"
        published = {p.relative_to(files_dir).as_posix() for p in files_dir.rglob("*") if p.is_file()}
        assert published == linked
        sources = source_tree(root, name)
        assert all((out / raw_path(name, path)).read_bytes() == sources[path] for path in linked)
        with zipfile.ZipFile(out / detail["bundles"]["zip"]["path"]) as archive:
            assert {i.filename: archive.read(i) for i in archive.infolist()} == sources
    assert linked_files(validate_folder(root / "skills/link-kinds", load_config(root / "registry.yaml"),
                                        "spec")[0]) == LINKED


class _Targets(HTMLParser):
    """Every href and src of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [v for k, v in attrs if k in ("href", "src") and v is not None]


def test_the_page_of_a_lean_build_shows_skill_md_and_every_body_link_lands_on_a_file(
        lean_build: tuple[Path, Path]) -> None:
    _, out = lean_build
    page = (out / "skills/link-kinds/index.html").read_text(encoding="utf-8")
    body = page[page.index('<div class="sr-body">'):page.index('<h2 id="files">')]  # the rendered SKILL.md body
    assert 'id="skill-link-kinds"' in body and "first, then" in body
    prefix = "../../api/v1/skills/link-kinds/files/"
    targets = _Targets()
    targets.feed(body)
    inside = [t for t in targets.found if t.startswith(prefix)]
    assert {unquote(t.removeprefix(prefix)) for t in inside} == LINKED
    for target in inside:
        assert (out / "skills/link-kinds" / unquote(target)).resolve().is_file(), target


@pytest.mark.parametrize("body", [
    LINKS_MD.split("---\n", 2)[2],
    "No links at all, only `scripts/run.sh` in code.\n",
    "```\n[not a link](references/guide.md)\n```\n\n    [indented code](assets/form.md)\n",
    "[a](references/guide.md?x=1) [b](references/../references/guide.md) [c](/etc/passwd) [d](../outside.md)\n",
    "<p>HTML block <a href='assets/form.md'>form</a></p>\n\n[^1] and text.\n\n[^1]: A note [with a link](assets/template.md).\n",
    "[unused reference]: assets/logo.png\n\n[used][ref]\n\n[ref]: <references/notes one.md>\n",
])
def test_the_linked_files_are_the_files_the_rendered_body_points_at(tmp_path: Path, body: str) -> None:
    files = {k.removeprefix("skills/link-kinds/"): v for k, v in LINKS_FILES.items()}
    files["SKILL.md"] = LINKS_MD.split("# Link kinds", 1)[0] + body
    folder = write_tree(tmp_path / "skills" / "link-kinds", files)
    skill, _ = validate_folder(folder, load_config(REPO / "registry.yaml"), "spec")
    html = BodyRenderer().render(skill.body, {f.path for f in skill.files}, "RAW/")
    targets = _Targets()
    targets.feed(html)
    rendered = {unquote(t.removeprefix("RAW/").split("#")[0]) for t in targets.found if t.startswith("RAW/")}
    assert linked_files(skill) >= rendered
    # A reference definition nothing uses is not rendered; the copy it costs is one small file, never a 404.
    assert linked_files(skill) - rendered <= {"assets/logo.png"}


@pytest.mark.parametrize(("publish", "raw_all", "json", "well_known"), [
    ("", True, True, True),
    ("publish:\n  raw_files: linked\n", False, True, True),
    ("publish:\n  json_bundles: false\n", True, False, True),
    ("publish:\n  well_known_skills: false\n", True, True, False),
    ("publish:\n  raw_files: all\n  json_bundles: true\n  well_known_skills: true\n", True, True, True),
])
def test_each_publish_setting_drops_only_its_own_copy(tmp_path: Path, publish: str, raw_all: bool, json: bool,
                                                      well_known: bool) -> None:
    root = registry(tmp_path / "registry", publish, names=["csv-profiler"])
    out = build_of(root, tmp_path / "out")
    for name in ("csv-profiler", "link-kinds"):
        detail = detail_of(out, name)
        jsonschema.validate(detail, load_schema("detail"))
        sources = source_tree(root, name)
        skill, _ = validate_folder(root / "skills" / name, load_config(root / "registry.yaml"), "spec")
        # With discovery v0.1 the one raw copy of every file is its copy there; files/ holds only what v0.1 lacks.
        raw = set(sources) if raw_all or well_known else linked_files(skill)
        rows = {f["path"]: f for f in detail["files"]}
        assert {p for p, f in rows.items() if "raw" in f} == raw
        for p in raw:
            assert rows[p]["raw"] == (f"{WELL_KNOWN_V1}/{name}/{p}" if well_known else raw_path(name, p))
            assert (out / rows[p]["raw"]).read_bytes() == sources[p]
        files_dir = out / "api/v1/skills" / name / "files"
        assert {p.relative_to(files_dir).as_posix() for p in files_dir.rglob("*") if p.is_file()} == \
            (set() if well_known else raw)
        assert ("json" in detail["bundles"]) == json
        assert (out / detail["bundles"]["zip"]["path"]).is_file()
        if json:
            bundle = out / detail["bundles"]["json"]["path"]
            assert hashlib.sha256(bundle.read_bytes()).hexdigest() == detail["bundles"]["json"]["sha256"]
        if well_known:  # v0.1 needs every file, linked or not, under its own path
            assert all((out / WELL_KNOWN_V1 / name / p).read_bytes() == data for p, data in sources.items())
    assert (out / WELL_KNOWN_V1 / "index.json").is_file() == well_known
    assert (out / WELL_KNOWN_V1).exists() == well_known


def test_every_published_json_document_is_compact(lean_build: tuple[Path, Path], tmp_path: Path) -> None:
    default = build_of(registry(tmp_path / "registry", names=["csv-profiler"]), tmp_path / "out")
    for out in (lean_build[1], default):
        documents = [p for part in ("api", ".well-known") for p in (out / part).rglob("*.json")]
        assert len(documents) > 10
        for path in documents:
            data = path.read_bytes()
            assert data == dumps(json.loads(data)), path


def test_changing_a_publish_setting_rebuilds_every_skill(tmp_path: Path) -> None:
    root = registry(tmp_path / "registry", names=["csv-profiler", "secret-scanner"])
    out = tmp_path / "out"
    build_of(root, out)
    for publish in (LEAN, "publish:\n  raw_files: linked\n", ""):
        set_publish(root, publish)
        result = build(load_config(root / "registry.yaml"), out, BuildOptions(site=False))
        assert sorted(result.written) == ["csv-profiler", "link-kinds", "secret-scanner"], publish
        scratch = tmp_path / f"scratch-{len(publish)}"
        build(load_config(root / "registry.yaml"), scratch, BuildOptions(site=False))
        assert all_files(out) == all_files(scratch), publish
    # Unchanged settings: nothing is rebuilt.
    assert build(load_config(root / "registry.yaml"), out, BuildOptions(site=False)).written == ()


def test_a_lean_rebuild_follows_the_links_a_changed_body_gains_and_loses(tmp_path: Path) -> None:
    root = registry(tmp_path / "registry", LEAN, names=["csv-profiler"])
    out = build_of(root, tmp_path / "out")
    unlinked = out / raw_path("link-kinds", "references/unlinked.md")
    assert not unlinked.exists()
    skill_md = root / "skills/link-kinds/SKILL.md"
    text = skill_md.read_text(encoding="utf-8")
    skill_md.write_text(text.replace("first, then [notes](./references/notes%20one.md)",
                                     "first, then [the rest](references/unlinked.md)"), encoding="utf-8")
    git(root, "commit", "-q", "-am", "link another file")
    result = build(load_config(root / "registry.yaml"), out, BuildOptions(site=False))
    assert result.written == ("link-kinds",)
    assert unlinked.read_bytes() == b"# Never linked\n"
    assert not (out / raw_path("link-kinds", "references/notes one.md")).exists()
    assert all_files(out) == all_files(build_of(root, tmp_path / "scratch"))


def test_two_lean_builds_of_one_commit_are_byte_identical(lean_build: tuple[Path, Path], tmp_path: Path) -> None:
    root, first = lean_build
    second = build_of(root, tmp_path / "again", site=True)
    assert all_files(first) == all_files(second)


# ---------------------------------------------------------------------------------- readers of a lean build

def test_the_agent_skills_index_of_a_lean_build_resolves_to_the_zips(lean_build: tuple[Path, Path]) -> None:
    root, out = lean_build
    index_path = out / WELL_KNOWN_V2 / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    jsonschema.validate(index, load_schema("discovery-v2"))
    assert sorted(e["name"] for e in index["skills"]) == sorted([*SKILLS, "link-kinds"])
    for entry in index["skills"]:
        archive = (index_path.parent / entry["url"]).resolve()
        assert archive.is_relative_to(out.resolve()) and archive.suffix == ".zip"
        assert entry["digest"] == "sha256:" + hashlib.sha256(archive.read_bytes()).hexdigest()
        with zipfile.ZipFile(archive) as z:
            assert {i.filename: z.read(i) for i in z.infolist()} == source_tree(root, entry["name"])


def _edit(root: Path, name: str) -> None:
    skill_md = root / "skills" / name / "SKILL.md"
    text = skill_md.read_text(encoding="utf-8").replace("version: 1.0.0", "version: 1.1.0")
    skill_md.write_text(text + "\nOne more line.\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", f"edit {name}")


@pytest.mark.parametrize("client", ["old", "new"])
def test_clients_install_update_and_restore_from_a_lean_build(tmp_path: Path, project: Path, client: str) -> None:
    """A client built from main before ``publish:`` existed, and this checkout's, against the same lean output."""
    old = old_builder(tmp_path, OLD_CLIENT_COMMIT) if client == "old" else None

    def skillreg(*args: str) -> str:
        if old is None:
            result = run(*args)
            assert result.exit_code == 0, result.output
            return result.output
        done = subprocess.run([sys.executable, "-c", LAUNCHER, str(old), *args], cwd=project, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    root = registry(tmp_path / "registry", LEAN, names=["csv-profiler"])
    out = build_of(root, tmp_path / "out")
    installed = project / ".claude/skills"
    with RegistryServer(out) as server:
        skillreg("install", "csv-profiler", "link-kinds", "--registry", server.url, "--agent", "claude")
        for name in ("csv-profiler", "link-kinds"):
            assert {p: data for p, (data, _) in tree(installed / name).items()} == source_tree(root, name)
        assert tree(installed / "link-kinds")["scripts/run.sh"][1] == 0o755
        first = json.loads((project / "skills-lock.json").read_text())["skills"]["link-kinds"]["digest"]

        _edit(root, "link-kinds")
        build_of(root, out)
        assert "link-kinds" in skillreg("update", "--registry", server.url)
        assert source_tree(root, "link-kinds") == {p: d for p, (d, _) in tree(installed / "link-kinds").items()}
        lock = json.loads((project / "skills-lock.json").read_text())["skills"]["link-kinds"]
        assert lock["digest"] != first and lock["digest"] == detail_of(out, "link-kinds")["digest"]

        shutil.rmtree(project / ".claude")
        skillreg("install", "--frozen", "--registry", server.url)
        assert source_tree(root, "link-kinds") == {p: d for p, (d, _) in tree(installed / "link-kinds").items()}
        assert {p: d for p, (d, _) in tree(installed / "csv-profiler").items()} == source_tree(root, "csv-profiler")
        if old is not None:
            return  # restores from history came after that commit
        # An older locked version restores from the registry's history, which publishes only its zip.
        data = json.loads((project / "skills-lock.json").read_text())
        data["skills"]["link-kinds"]["digest"] = first
        (project / "skills-lock.json").write_text(json.dumps(data))
        shutil.rmtree(project / ".claude")
        skillreg("install", "--frozen", "--registry", server.url)
        assert "One more line." not in (installed / "link-kinds/SKILL.md").read_text(encoding="utf-8")


def test_the_mcp_server_serves_a_lean_build(lean_build: tuple[Path, Path], tmp_path: Path) -> None:
    import anyio

    root, out = lean_build
    project = tmp_path / "project"
    project.mkdir()
    with RegistryServer(out) as server:
        tools, results = anyio.run(mcp_session, server.url, project, [
            ("search_skills", {"query": "link kinds"}),
            ("get_skill", {"id": "link-kinds"}),
            ("install_skill", {"slug": "link-kinds", "target": "codex"}),
        ])
    assert tools == ["get_skill", "install_skill", "search_skills"]
    found, got, installed = results
    assert not any(r.is_error for r in results), [r.content for r in results]
    assert "link-kinds" in [s["slug"] for s in json.loads(found.content[0].text)["skills"]]
    files = {f["filename"]: f["content"] for f in json.loads(got.content[0].text)["files"]}
    sources = source_tree(root, "link-kinds")
    assert {k: v.encode() for k, v in files.items() if not k.endswith(".png")} == {
        k: v for k, v in sources.items() if not k.endswith(".png")}
    folder = Path(json.loads(installed.content[0].text)["path"])
    assert {p: d for p, (d, _) in tree(folder).items()} == sources
