"""What a new user trips over in the first hour: each rough edge driven the way the user meets it, through the
command line against a real server, a real ``skillreg serve``, and the MCP SDK's own client."""

from __future__ import annotations

import html
import json
import queue
import re
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.client import Fault, RegistryServer, mcp_session, run, tree
from helpers.site import bundled_site

from builder.cli.app import cli
from builder.core.config import load_config
from builder.ops.serve import ServeEvent, serve

DETAIL = "api/v1/skills/csv-profiler.json"


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


# -- update says "Recorded" once ----------------------------------------------------------------------------

def test_update_records_the_lock_once(server: RegistryServer, site_v2: Path, project: Path) -> None:
    installed = run("install", "csv-profiler", "json-schema-check", "--registry", server.url)
    assert installed.stdout.count("Recorded in skills-lock.json") == 1
    server.state.root = site_v2
    updated = run("update", "--registry", server.url)
    assert updated.exit_code == 0, updated.output
    lines = updated.stdout.splitlines()
    assert lines[0].startswith("Updated csv-profiler 1.0.0 (sha256:")
    assert lines.count("Recorded in skills-lock.json") == 1 and lines[-1] == "Recorded in skills-lock.json"
    nothing = run("update", "--registry", server.url)
    assert "Recorded" not in nothing.stdout


# -- install with no names: restore what can be restored ------------------------------------------------------

def _unpublish(server: RegistryServer, count: int = 8) -> None:
    """The registry stops publishing csv-profiler at all: its detail document and versions.json answer 404."""
    server.state.fault(DETAIL, *[Fault(status=404) for _ in range(count)])
    server.state.fault("api/v1/skills/csv-profiler/versions.json", *[Fault(status=404) for _ in range(count)])


def test_restore_skips_a_skill_no_longer_published_when_its_folder_matches(server: RegistryServer,
                                                                          project: Path) -> None:
    run("install", "csv-profiler", "json-schema-check", "--registry", server.url)
    lock_before = json.loads((project / "skills-lock.json").read_text())
    kept = tree(project / ".claude/skills/csv-profiler")
    shutil.rmtree(project / ".claude/skills/json-schema-check")
    _unpublish(server)
    result = run("install", "--registry", server.url)
    assert result.exit_code == 0, result.output
    digest = lock_before["skills"]["csv-profiler"]["digest"]
    assert (f"csv-profiler: the registry no longer publishes it (locked {digest[:19]}…: it has neither the skill "
            "nor a version history for it); its folders match the lock, left as installed\n") in result.stdout
    assert "Restored json-schema-check" in result.stdout
    assert (project / ".claude/skills/json-schema-check/SKILL.md").is_file()
    assert tree(project / ".claude/skills/csv-profiler") == kept
    assert json.loads((project / "skills-lock.json").read_text()) == lock_before


def test_restore_reports_the_folder_it_cannot_restore_and_fails_only_when_frozen(server: RegistryServer,
                                                                                project: Path) -> None:
    run("install", "csv-profiler", "json-schema-check", "--registry", server.url)
    lock_before = (project / "skills-lock.json").read_bytes()
    digest = json.loads(lock_before)["skills"]["csv-profiler"]["digest"]
    for name in ("csv-profiler", "json-schema-check"):
        shutil.rmtree(project / ".claude/skills" / name)
    _unpublish(server)
    frozen = run("install", "--frozen", "--registry", server.url)
    assert frozen.exit_code == 1
    assert frozen.stderr == (f"Error: --frozen: the lock and the registry disagree: csv-profiler (lock "
                             f"{digest[:19]}…, not published); nothing was changed\n")
    assert not (project / ".claude/skills/json-schema-check").exists()
    result = run("install", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"Cannot restore csv-profiler into .claude/skills/csv-profiler: the registry no "
                             f"longer publishes it (locked {digest[:19]}…: it has neither the skill nor a version "
                             "history for it)\n")
    assert "Restored json-schema-check" in result.stdout
    assert (project / ".claude/skills/json-schema-check/SKILL.md").is_file()
    assert not (project / ".claude/skills/csv-profiler").exists()
    assert (project / "skills-lock.json").read_bytes() == lock_before


# -- did you mean ...? ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["install", "info"])
def test_an_unknown_name_from_the_registry_gets_a_suggestion(command: str, server: RegistryServer,
                                                            project: Path) -> None:
    result = run(command, "csv-profilr", "--registry", server.url)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: no skill named 'csv-profilr' in {server.url}; did you mean csv-profiler?\n")
    far = run(command, "zzzz-qqqq", "--registry", server.url)
    assert far.stderr == f"Error: no skill named 'zzzz-qqqq' in {server.url}\n"


@pytest.mark.parametrize("command", ["remove", "update"])
def test_an_unknown_installed_name_gets_a_suggestion(command: str, server: RegistryServer, project: Path) -> None:
    run("install", "csv-profiler", "--registry", server.url)
    result = run(command, "csv-profilr")
    assert result.exit_code == 2
    assert result.stderr == ("Error: not installed (not in skills-lock.json): csv-profilr; "
                             "did you mean csv-profiler?\n")
    assert run(command, "zzzz-qqqq").stderr == "Error: not installed (not in skills-lock.json): zzzz-qqqq\n"
    assert (project / ".claude/skills/csv-profiler/SKILL.md").is_file()


# -- validate: a clean run says so --------------------------------------------------------------------------

REGISTRY_YAML = "title: Test registry\ncategories:\n  - slug: data\n    title: Data\n"


def skill_md(name: str, extra: str = "") -> str:
    return (f"---\nname: {name}\ndescription: Demonstrates the CLI. Use when testing skillreg.\n"
            f"metadata:\n  category: data\n{extra}---\n# Steps\n\nDo it.\n")


def test_a_clean_run_says_every_skill_is_valid_and_findings_keep_the_counts(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"registry.yaml": REGISTRY_YAML, "skills/alpha/SKILL.md": skill_md("alpha"),
                                 "skills/beta/SKILL.md": skill_md("beta"), "skills/gamma/SKILL.md": skill_md("gamma")})
    config = ["--config", str(root / "registry.yaml")]
    clean = CliRunner().invoke(cli, [*config, "validate"])
    assert (clean.exit_code, clean.stdout) == (0, "All 3 skills are valid.\n")
    one = CliRunner().invoke(cli, [*config, "validate", str(root / "skills/alpha")])
    assert (one.exit_code, one.stdout) == (0, "The skill is valid.\n")
    (root / "skills/beta/SKILL.md").write_text(skill_md("beta", "colour: blue\n").replace(
        "metadata:\n  category: data\ncolour: blue\n", "colour: blue\nmetadata:\n  category: data\n"))
    warned = CliRunner().invoke(cli, [*config, "validate", "--profile", "lenient"])
    assert warned.exit_code == 0
    assert warned.stdout.splitlines()[-1] == "0 errors, 1 warning in 1 of 3 skills"


# -- import --name rewrites the name line, or writes nothing ------------------------------------------------

def _import(root: Path, text: bytes, name: str):
    return CliRunner().invoke(cli, ["--config", str(root / "registry.yaml"), "import", "-", "--name", name],
                              input=text)


@pytest.mark.parametrize("name_line, renamed", [
    ("name: demo", "name: demo-two"),
    ("name: 'demo'", "name: demo-two"),
    ('name: "demo"', "name: demo-two"),
    ("name:   demo   # old name", "name:   demo-two   # old name"),
])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_import_with_a_new_name_rewrites_only_the_name_line(tmp_path: Path, name_line: str, renamed: str,
                                                            newline: str) -> None:
    root = write_tree(tmp_path, {"registry.yaml": REGISTRY_YAML})
    lines = ["---", "description: Demonstrates the CLI. Use when testing skillreg.", name_line,
             "metadata:", "  category: data", "  author: Ann  # name: keep", "---", "# Demo", "", "name: demo", ""]
    original = newline.join(lines).encode()
    text = original + b"\n\x1fFILE:references/guide.md\x1e\n# Guide\n"
    result = _import(root, text, "demo-two")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "The skill is valid."
    written = (root / "skills/demo-two/SKILL.md").read_bytes()
    assert written == original.replace(name_line.encode(), renamed.encode(), 1)
    assert written.count(b"demo-two") == 1
    assert (root / "skills/demo-two/references/guide.md").read_bytes() == b"# Guide\n"


@pytest.mark.parametrize("name_yaml, why", [
    ("name: >\n  demo\n", "line 3 is not a one-line `name: value`"),
    ("name: demo\n  continued\n", "the `name` on line 3 continues past that line"),
    ("name: [demo]\n", "its frontmatter has no `name:` line"),
    ("", "its frontmatter has no `name:` line"),
])
def test_import_refuses_a_name_it_cannot_rewrite_and_writes_nothing(tmp_path: Path, name_yaml: str,
                                                                    why: str) -> None:
    root = write_tree(tmp_path, {"registry.yaml": REGISTRY_YAML})
    text = (f"---\ndescription: Demonstrates the CLI.\n{name_yaml}metadata:\n  category: data\n---\n# Demo\n"
            ).encode()
    result = _import(root, text, "demo-two")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: SKILL.md: {why}; cannot rename the skill to 'demo-two' safely. Edit the "
                             "`name:` line to demo-two first, or import without --name\n")
    assert not (root / "skills").exists()


# -- serve answers a missing page with the site's own 404 ----------------------------------------------------

def _status(url: str, method: str = "GET") -> tuple[int, bytes, str]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read(), exc.headers.get("Content-Type", "")


def test_serve_answers_a_missing_page_with_the_sites_404_page(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "registry", {
        "registry.yaml": REGISTRY_YAML + "base_url: https://example.org/reg/\n",
        "skills/alpha/SKILL.md": skill_md("alpha"),
    })
    events: queue.Queue[ServeEvent] = queue.Queue()
    stop = threading.Event()
    out = root / "site"
    # Built for the published base URL (serve otherwise builds for its own address, whose path is /).
    thread = threading.Thread(target=serve, args=(load_config(root / "registry.yaml"), out),
                              kwargs={"port": 0, "interval": 0.2, "on_event": events.put, "stop": stop,
                                      "base_url": "https://example.org/reg/"})
    thread.start()
    try:
        while (event := events.get(timeout=120)).kind != "serving":
            assert event.kind != "failed", event.error
        url = event.url
        page = (out / "404.html").read_bytes()
        for missing in ("no-such-page/", "skills/nope/", "api/v1/skills/nope.json", "reg/no-such-page/"):
            assert _status(url + missing) == (404, page, "text/html; charset=utf-8"), missing
        assert _status(url + "no-such-page/", "HEAD")[:2] == (404, b"")
        # The 404 page links to its assets under the published base path; they must load locally too.
        assets = re.findall(r'(?:href|src)="(/reg/assets/[^"]+)"', page.decode())
        assert assets
        for asset in assets:
            status, body, _ = _status(url + asset.lstrip("/"))
            assert status == 200 and body == (out / asset.removeprefix("/reg/")).read_bytes()
        status, body, _ = _status(url + "skills/alpha/")
        assert status == 200 and b"Demonstrates the CLI" in body
    finally:
        stop.set()
        thread.join(timeout=30)


# -- authors: the skill's author and git's contributors, both labelled ------------------------------------------

def test_the_skill_page_shows_the_author_and_the_contributors_labelled(tmp_path_factory) -> None:
    out = bundled_site(tmp_path_factory.getbasetemp())
    detail = json.loads((out / DETAIL).read_text(encoding="utf-8"))
    text = html.unescape((out / "skills/csv-profiler/index.html").read_text(encoding="utf-8"))
    author = detail["frontmatter"]["metadata"]["author"]
    contributors = ", ".join(detail["provenance"]["authors"]) or "unknown"
    # The panel beside the body names both, each term saying where it comes from; provenance lists every
    # contributor and says again which is which.
    assert re.search(rf'<dt title="metadata.author in SKILL.md">Author</dt><dd>{re.escape(author)}</dd>', text)
    assert re.search(rf'<dt title="git commit authors">Contributors</dt><dd>{re.escape(contributors)}</dd>', text)
    assert re.search(rf"<dt>Contributors</dt><dd>{re.escape(contributors)} <span class=\"sr-note\">\(git commit "
                     r"authors; the author is <code>metadata.author</code>\)</span></dd>", text)


# -- MCP get_skill takes id or slug ---------------------------------------------------------------------------

def test_mcp_get_skill_by_slug_or_id(server: RegistryServer, site: Path, project: Path) -> None:
    import anyio

    _, (by_id, by_slug, both, neither, clash, typo) = anyio.run(mcp_session, server.url, project, [
        ("get_skill", {"id": "csv-profiler"}),
        ("get_skill", {"slug": "csv-profiler"}),
        ("get_skill", {"id": "csv-profiler", "slug": "csv-profiler"}),
        ("get_skill", {}),
        ("get_skill", {"id": "csv-profiler", "slug": "json-schema-check"}),
        ("get_skill", {"slug": "csv-profilr"}),
    ])
    payloads = [json.loads(r.content[0].text) for r in (by_id, by_slug, both)]
    assert not any(r.is_error for r in (by_id, by_slug, both))
    assert payloads[0] == payloads[1] == payloads[2]
    detail = json.loads((site / DETAIL).read_text())
    assert payloads[1]["slug"] == "csv-profiler"
    assert payloads[1]["author"] == detail["frontmatter"]["metadata"]["author"]
    assert payloads[1]["contributors"] == detail["provenance"]["authors"]
    assert neither.is_error and neither.content[0].text.endswith("get_skill needs the skill's id or slug")
    assert clash.is_error and "they name different skills" in clash.content[0].text
    assert typo.is_error and typo.content[0].text.endswith("did you mean csv-profiler?")
