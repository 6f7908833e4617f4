"""`skillreg update` at a cost that does not grow with the registry: state.json (one request, 304 when no skill's
latest changed), then one head.json per installed skill, against a real build of a real git registry served by a
real HTTP server that answers If-None-Match and counts every byte it sends. Registries built before state.json
fall back to index.json, and a client released before it still updates against a new build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.client import Fault, RegistryServer, _Handler, build_site, commit, copy_registry, old_builder, run

from builder.core.urls import INDEX_PATH, STATE_PATH, head_path, state_digest, versions_path
from builder.publish.schemas import load_schema

INSTALLED = ("adr-writer", "csv-profiler", "log-summarizer")
OTHERS = ("branch-cleanup", "changelog-from-git", "readme-writer")
# main before state.json and head.json: its `update` reads only api/v1/index.json.
OLD_CLIENT_COMMIT = "e9aca9589813b2e6a6145107cd6749a3f0a329c8"
PER_SKILL = 1024  # the bound: bytes an update check may transfer per installed skill
CONSTANT = 1024  # plus this much once (state.json)


class _CountingWriter:
    def __init__(self, inner: Any) -> None:
        self.inner, self.count = inner, 0

    def write(self, data: bytes) -> int:
        self.count += len(data)
        return int(self.inner.write(data))

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()


class _Counting(_Handler):
    """The test server's handler, also counting the bytes of every answer: status line, headers and body."""

    def setup(self) -> None:
        super().setup()
        self.wfile = _CountingWriter(self.wfile)  # type: ignore[assignment]

    def do_GET(self) -> None:  # noqa: N802
        writer: _CountingWriter = self.wfile  # type: ignore[assignment]
        start = writer.count
        super().do_GET()
        self.server.sent.append(writer.count - start)  # type: ignore[attr-defined]


class Served:
    def __init__(self, server: RegistryServer) -> None:
        self.server = server
        self.url = server.url

    def clear(self) -> None:
        self.server.state.log.clear()
        self.server.httpd.sent.clear()  # type: ignore[attr-defined]

    def paths(self) -> list[tuple[str, int]]:
        return self.server.state.paths()

    def sent(self) -> int:
        return sum(self.server.httpd.sent)  # type: ignore[attr-defined]


def counting_server(root: Path) -> RegistryServer:
    server = RegistryServer(root)
    server.httpd.RequestHandlerClass = _Counting
    server.httpd.sent = []  # type: ignore[attr-defined]
    return server


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return copy_registry(tmp_path / "registry")


@pytest.fixture
def served(registry: Path, tmp_path: Path, project: Path):
    """The registry built and served, with INSTALLED installed and checked once (so the cache holds it all)."""
    site = build_site(registry, tmp_path / "site")
    with counting_server(site) as server:
        assert run("install", *INSTALLED, "--registry", server.url).exit_code == 0
        assert run("update", "--registry", server.url).exit_code == 0
        served = Served(server)
        served.clear()
        yield served


def edit(registry: Path, name: str, line: str) -> None:
    skill_md = registry / "skills" / name / "SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    commit(registry, f"edit {name}")


def rebuild(registry: Path, tmp_path: Path) -> Path:
    return build_site(registry, tmp_path / "site")


def lock_digest(project: Path, name: str) -> str:
    return str(json.loads((project / "skills-lock.json").read_text())["skills"][name]["digest"])


def update_lines(url: str) -> list[str]:
    result = run("update", "--registry", url)
    assert result.exit_code == 0, result.output
    return sorted(result.stdout.splitlines())


def test_nothing_changed_is_one_request_answered_304(served: Served, registry: Path, tmp_path: Path,
                                                     project: Path) -> None:
    site = tmp_path / "site"
    state_before = (site / STATE_PATH).read_bytes()
    result = run("update", "--registry", served.url)
    assert result.exit_code == 0, result.output
    assert served.paths() == [(STATE_PATH, 304)]
    assert served.server.state.log[0].etag_sent
    # A commit that changes no skill (nor any skill's latest) leaves state.json byte-identical: still one 304.
    (registry / "NOTES.md").write_text("not a skill\n", encoding="utf-8")
    commit(registry, "notes")
    rebuild(registry, tmp_path)
    assert (site / STATE_PATH).read_bytes() == state_before
    served.clear()
    assert run("update", "--registry", served.url).exit_code == 0
    assert served.paths() == [(STATE_PATH, 304)]


def test_other_skills_changed_costs_one_small_request_per_installed_skill(served: Served, registry: Path,
                                                                          tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    before = {name: lock_digest(project, name) for name in INSTALLED}
    state_before = (site / STATE_PATH).read_bytes()
    for name in OTHERS:
        edit(registry, name, f"A new line for {name}.")
    rebuild(registry, tmp_path)
    assert (site / STATE_PATH).read_bytes() != state_before
    lines = update_lines(served.url)
    assert all(line.endswith(")") and " is up to date (" in line for line in lines), lines
    assert served.paths() == [(STATE_PATH, 200)] + [(head_path(name), 304) for name in INSTALLED]
    assert served.sent() <= PER_SKILL * len(INSTALLED) + CONSTANT, served.sent()
    assert served.sent() < (site / INDEX_PATH).stat().st_size  # already below the whole index at 26 skills
    assert {name: lock_digest(project, name) for name in INSTALLED} == before
    served.clear()  # and the next check is one request again
    assert run("update", "--registry", served.url).exit_code == 0
    assert served.paths() == [(STATE_PATH, 304)]


def test_checking_one_skill_by_name_fetches_only_its_head(served: Served, registry: Path, tmp_path: Path,
                                                          project: Path) -> None:
    edit(registry, OTHERS[0], "Changed.")
    rebuild(registry, tmp_path)
    assert run("update", "--registry", served.url, "csv-profiler").exit_code == 0
    assert served.paths() == [(STATE_PATH, 200), (head_path("csv-profiler"), 304)]
    served.clear()
    # The others were not checked under the new state: a full check revalidates them, not csv-profiler.
    assert run("update", "--registry", served.url).exit_code == 0
    assert served.paths() == [(STATE_PATH, 304), (head_path("adr-writer"), 304), (head_path("log-summarizer"), 304)]


def test_an_installed_skill_that_changed_is_updated(served: Served, registry: Path, tmp_path: Path,
                                                    project: Path) -> None:
    site = tmp_path / "site"
    old = lock_digest(project, "csv-profiler")
    edit(registry, "csv-profiler", "Now with a new line.")
    edit(registry, OTHERS[0], "And another skill changed too.")
    rebuild(registry, tmp_path)
    new = json.loads((site / head_path("csv-profiler")).read_text())["latest"]
    assert new != old
    result = run("update", "--registry", served.url)
    assert result.exit_code == 0, result.output
    assert lock_digest(project, "csv-profiler") == new
    installed = (project / ".claude/skills/csv-profiler/SKILL.md").read_text(encoding="utf-8")
    assert installed.endswith("Now with a new line.\n")
    paths = served.paths()
    assert paths[0] == (STATE_PATH, 200)
    assert [p for p in paths if p[0].endswith("head.json")] == [
        (head_path(n), 200 if n == "csv-profiler" else 304) for n in INSTALLED]
    assert (versions_path("csv-profiler"), 200) in paths
    assert not any(p == INDEX_PATH for p, _ in paths)  # never the whole index
    served.clear()
    assert run("update", "--registry", served.url).exit_code == 0
    assert served.paths() == [(STATE_PATH, 304)]


def test_a_skill_deleted_from_the_registry_is_reported_not_published(served: Served, registry: Path,
                                                                     tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    shutil.rmtree(registry / "skills" / "log-summarizer")
    commit(registry, "remove log-summarizer")
    rebuild(registry, tmp_path)
    # Decided: the head stays, saying latest null (as versions.json does); its versions stay by digest.
    head = json.loads((site / head_path("log-summarizer")).read_text())
    assert head["latest"] is None and head["digest"] is None
    jsonschema.validate(head, load_schema("head"))
    result = run("update", "--registry", served.url)
    assert result.exit_code == 0, result.output
    assert "log-summarizer: the registry no longer publishes it; left as installed" in result.stdout, result.stdout
    assert (project / ".claude/skills/log-summarizer/SKILL.md").is_file()  # left as it is
    assert [p for p, _ in served.paths()] == [STATE_PATH] + [head_path(n) for n in INSTALLED]


def test_a_skill_without_any_head_json_is_reported_not_published(served: Served, tmp_path: Path,
                                                                 project: Path) -> None:
    """Outside git a deleted skill leaves nothing behind: its head.json answers 404."""
    served.server.state.overrides[STATE_PATH] = b'{"api_version": 1, "count": 25, "digest": "sha256:' + \
        b"1" * 64 + b'"}'
    (tmp_path / "site" / head_path("adr-writer")).unlink()
    result = run("update", "--registry", served.url)
    assert result.exit_code == 0, result.output
    assert "adr-writer: the registry no longer publishes it; left as installed" in result.stdout, result.stdout
    assert (head_path("adr-writer"), 404) in served.paths()


def test_published_documents_follow_their_schemas_and_the_state_digest(registry: Path, tmp_path: Path) -> None:
    site = build_site(registry, tmp_path / "site")
    state = json.loads((site / STATE_PATH).read_text())
    jsonschema.validate(state, load_schema("state"))
    index = json.loads((site / INDEX_PATH).read_text())
    assert state["count"] == len(index["skills"])
    latest = {}
    for row in index["skills"]:
        data = (site / head_path(row["name"])).read_bytes()
        assert len(data) < 400, (row["name"], len(data))
        head = json.loads(data)
        jsonschema.validate(head, load_schema("head"))
        versions = json.loads((site / versions_path(row["name"])).read_text())
        assert head["name"] == row["name"] and head["digest"] == row["digest"] == versions["latest"]
        assert head["latest"] == versions["latest"]
        latest[row["name"]] = head["latest"]
    assert state["digest"] == state_digest(latest)
    again = build_site(registry, tmp_path / "again")
    assert (again / STATE_PATH).read_bytes() == (site / STATE_PATH).read_bytes()


def test_a_registry_built_before_state_json_is_checked_through_its_index(registry: Path, tmp_path: Path,
                                                                         project: Path) -> None:
    site = build_site(registry, tmp_path / "site")
    old = tmp_path / "old-site"
    shutil.copytree(site, old)
    (old / STATE_PATH).unlink()
    for head in (old / "api/v1/skills").glob("*/head.json"):
        head.unlink()
    with counting_server(old) as server:
        assert run("install", *INSTALLED, "--registry", server.url).exit_code == 0
        assert run("update", "--registry", server.url).exit_code == 0
        server.state.log.clear()
        assert run("update", "--registry", server.url).exit_code == 0
        assert server.state.paths() == [(STATE_PATH, 404), (INDEX_PATH, 304)]
        edit(registry, "csv-profiler", "Updated through the index.")
        new_site = build_site(registry, tmp_path / "site")
        for rel in (INDEX_PATH, versions_path("csv-profiler")):
            (old / rel).write_bytes((new_site / rel).read_bytes())
        shutil.copytree(new_site / "api/v1/bundles/csv-profiler", old / "api/v1/bundles/csv-profiler",
                        dirs_exist_ok=True)
        result = run("update", "--registry", server.url)
        assert result.exit_code == 0, result.output
        assert lock_digest(project, "csv-profiler") == json.loads((old / versions_path("csv-profiler")).read_text())[
            "latest"]


@pytest.mark.parametrize(("path", "body", "message"), [
    (STATE_PATH, b'{"api_version": 1, "count": "many", "digest": "x"}', "$.digest 'x' does not fit the schema"),
    (STATE_PATH, b'{"api_version": 1, "count": 1, "digest": "' + b"a" * 70_000 + b'"}', "larger than"),
    (head_path("csv-profiler"), b'{"api_version": 1, "name": "other", "digest": null, "latest": null}',
     "is not the head document of 'csv-profiler'"),
    (head_path("csv-profiler"), b'{"api_version": 1, "name": "csv-profiler", "digest": null, "latest": "../x"}',
     "$.latest '../x' does not fit the schema (pattern"),
    (head_path("csv-profiler"), b"[" * 10_000 + b"]" * 10_000, "nests JSON objects and arrays"),
])
def test_a_hostile_state_or_head_is_refused_in_one_line(served: Served, project: Path, path: str, body: bytes,
                                                        message: str) -> None:
    lock_before = (project / "skills-lock.json").read_bytes()
    served.server.state.overrides[path] = body
    if path != STATE_PATH:  # a new state, so the head is asked for again
        served.server.state.overrides[STATE_PATH] = b'{"api_version": 1, "count": 1, "digest": "sha256:' + \
            b"0" * 64 + b'"}'
    result = run("update", "--registry", served.url)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    assert f"{served.url}{path}" in result.stderr and message in result.stderr, result.stderr
    assert (project / "skills-lock.json").read_bytes() == lock_before



def test_a_client_released_before_state_json_updates_against_a_new_build(served: Served, registry: Path,
                                                                         tmp_path: Path, project: Path) -> None:
    old = old_builder(tmp_path, OLD_CLIENT_COMMIT)
    assert not (old / "builder/core/urls.py").read_text().count("state.json")
    launcher = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import builder; "
                "assert builder.__file__.startswith(sys.path[0]), builder.__file__; "
                "from builder.cli.app import main; main()")

    def old_update() -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-c", launcher, str(old), "update"], cwd=project, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done

    assert "csv-profiler is up to date" in old_update().stdout
    edit(registry, "csv-profiler", "Seen by an old client.")
    rebuild(registry, tmp_path)
    served.clear()
    old_update()
    assert served.paths()[0] == (INDEX_PATH, 200)
    assert not any(p.endswith(("state.json", "head.json")) for p, _ in served.paths())
    new = json.loads((tmp_path / "site" / head_path("csv-profiler")).read_text())["latest"]
    assert lock_digest(project, "csv-profiler") == new


def test_an_unreachable_registry_is_checked_from_the_cache_with_a_warning(served: Served, project: Path) -> None:
    served.server.state.fault(STATE_PATH, *[Fault(status=503)] * 3)
    result = run("update", "--registry", served.url)
    assert result.exit_code == 0, result.output
    assert f"working offline with the copy of {STATE_PATH} cached" in result.stderr, result.stderr
    assert sorted(result.stdout.splitlines()) == sorted(
        f"{name} is up to date ({version})" for name, version in
        ((n, json.loads((project / "skills-lock.json").read_text())["skills"][n]["version"]) for n in INSTALLED))
    assert served.paths() == [(STATE_PATH, 503)] * 3  # the heads came from the cache, unasked
