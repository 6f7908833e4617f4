"""Installing by collection: ``COLLECTION/`` installs each of its skills under its slug, one lock entry each; a
name two skills have is refused, listing both; from a real build served on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from helpers.client import RegistryServer, build_site, mcp_session, run
from helpers.plugins import plugin_repository


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("plugins")
    site = build_site(plugin_repository(base / "repo"), base / "site")
    with RegistryServer(site) as running:
        yield running


def test_a_collection_installs_each_of_its_skills_under_its_slug(server: RegistryServer, project: Path) -> None:
    result = run("install", "docs/", "ops/", "--dir", "vendor", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (project / "vendor").iterdir()) == ["docx", "ops-pdf", "pdf"]
    lock = json.loads((project / "skills-lock.json").read_text())
    assert sorted(lock["skills"]) == ["docx", "ops-pdf", "pdf"]
    assert "name: pdf" in (project / "vendor/ops-pdf/SKILL.md").read_text()


@pytest.mark.parametrize(("spec", "folder"), [("ops/pdf", "ops-pdf"), ("docs/pdf", "pdf"), ("ops-pdf", "ops-pdf")])
def test_a_skill_of_a_collection_by_its_own_name(spec: str, folder: str, server: RegistryServer,
                                                 project: Path) -> None:
    result = run("install", spec, "--dir", "vendor", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert [p.name for p in (project / "vendor").iterdir()] == [folder]


@pytest.mark.parametrize(("spec", "message"), [
    ("nope/", "Error: no collection named `nope` in {url} (its collections: docs, ops, writing)\n"),
    ("docs/@1.0.0", "Error: docs/@1.0.0: a collection installs each skill's newest version; drop @1.0.0, or "
                    "install one skill as docs/NAME@1.0.0\n"),
    ("writing/pdf", "Error: no skill named `pdf` in collection `writing`\n"),
])
def test_a_collection_that_cannot_be_installed_is_one_line(spec: str, message: str, server: RegistryServer,
                                                           project: Path) -> None:
    result = run("install", spec, "--dir", "vendor", "--registry", server.url)
    assert (result.exit_code, result.output) == (2, message.format(url=server.url))
    assert not (project / "vendor").exists() and not (project / "skills-lock.json").exists()


def test_mcp_search_skills_filters_by_collection(server: RegistryServer, project: Path) -> None:
    _, results = anyio.run(mcp_session, server.url, project, [
        ("search_skills", {"query": "pdf", "collection": "ops"}),
        ("search_skills", {"query": "pdf"}),
        ("search_skills", {"query": "pdf", "collection": "nope"}),
    ])
    in_ops, everywhere, unknown = results
    assert [s["slug"] for s in json.loads(in_ops.content[0].text)["skills"]] == ["ops-pdf"]
    assert sorted(s["slug"] for s in json.loads(everywhere.content[0].text)["skills"]) == ["ops-pdf", "pdf"]
    assert unknown.is_error and unknown.content[0].text.endswith(f"{server.url}: no collection named `nope`")


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_an_install_never_overwrites_a_folder_holding_another_skill(force: list[str], server: RegistryServer,
                                                                    project: Path) -> None:
    mine = project / "vendor/pdf/SKILL.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nname: my-notes\ndescription: Mine.\n---\nMine.\n")
    result = run("install", "pdf", "--dir", "vendor", *force, "--registry", server.url)
    assert (result.exit_code, result.stderr) == (1, (
        "Error: vendor/pdf holds the skill 'my-notes', not pdf; installing pdf there would overwrite it, so nothing "
        "was changed: move that skill, or install into another --dir\n"))
    assert mine.read_text().startswith("---\nname: my-notes\n") and not (project / "skills-lock.json").exists()
