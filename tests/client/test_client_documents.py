"""A registry whose documents have fields of the wrong type: every document the client reads is checked against
its published JSON Schema (or the same shape by hand, for the indexes) and refused in one line naming the URL and
the field, with no traceback and nothing installed. Served by a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.client import Fault, RegistryServer, run

from builder.core.search import SHARDS_INDEX_PATH

DETAIL = "api/v1/skills/csv-profiler.json"
VERSIONS = "api/v1/skills/csv-profiler/versions.json"
HEAD = "api/v1/skills/csv-profiler/head.json"
INDEX = "api/v1/index.json"
STATE = "api/v1/state.json"
SEARCH_INDEX = "api/v1/search-index.json"


def _set(path: str, value: Any) -> Callable[[Any], None]:
    """An edit putting ``value`` at ``path`` (dotted, with list indexes) of a document."""
    def edit(doc: Any) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for part in parents:
            doc = doc[part]
        doc[last] = value
    return edit


# (document, edit, the command, documents that are missing, the field and what is wrong with it)
CASES = {
    "detail provenance": (DETAIL, _set("provenance", ["x"]), ["info", "csv-profiler"], [],
                          "$.provenance is an array, not object"),
    "detail bundles": (DETAIL, _set("bundles", [1]), ["install", "csv-profiler"], [VERSIONS],
                       "$.bundles is an array, not object"),
    "detail file path": (DETAIL, _set("files.0.path", 5), ["info", "csv-profiler"], [],
                         "$.files[0].path is an integer, not string"),
    "detail tags": (DETAIL, _set("tags", "csv"), ["info", "csv-profiler"], [], "$.tags is a string, not array"),
    "versions rules": (VERSIONS, _set("versions.0.rules", 7), ["install", "csv-profiler"], [],
                       "$.versions[0].rules is an integer, not array"),
    "versions zip": (VERSIONS, _set("versions.0.zip", "x.zip"), ["info", "csv-profiler", "--versions"], [],
                     "$.versions[0].zip is a string, not object or null"),
    "index tags": (INDEX, _set("skills.0.tags", "x"), ["update"], [STATE], "$.skills[0].tags is not an array of strings"),
    "index skill": (INDEX, _set("skills.1", "csv-profiler"), ["update"], [STATE],
                    "$.skills[1] is a string, not object"),
    "state count": (STATE, _set("count", "many"), ["update"], [], "$.count is a string, not integer"),
    "search manifest": (SHARDS_INDEX_PATH, _set("rows_per_file", "64"), ["search", "csv"], [],
                        "$.rows_per_file is a string, not a count"),
    "search manifest rows": (SHARDS_INDEX_PATH, _set("rows", [[1, 2]]), ["search", "csv"], [],
                             "$.rows[0] is an array, not [first name, digest]"),
    "search manifest sha256": (SHARDS_INDEX_PATH, _set("sha256", ["0" * 64]), ["search", "csv"], [],
                               "$.sha256 is an array, not an object"),
    "search manifest sha256 rows": (SHARDS_INDEX_PATH, _set("sha256.rows", [64]), ["search", "csv"], [],
                                    "$.sha256.rows is an array, not an array of strings"),
}


def files(project: Path) -> dict[str, bytes]:
    """What the project holds."""
    return {p.relative_to(project).as_posix(): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_wrong_typed_field_is_refused_in_one_line(case: str, server: RegistryServer, site: Path,
                                                    project: Path) -> None:
    document, edit, command, missing, why = CASES[case]
    if command[0] == "update":
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    before = files(project)
    doc = json.loads((site / document).read_text())
    edit(doc)
    server.state.overrides[document] = json.dumps(doc).encode()
    for path in missing:
        server.state.fault(path, *[Fault(status=404)] * 5)
    result = run(*command, "--registry", server.url)
    assert (result.exit_code, result.stderr) == (1, f"Error: {server.url}{document}: {why}; refusing it\n"), \
        result.output
    assert files(project) == before


def test_a_wrong_typed_head_is_refused_in_one_line(server: RegistryServer, site: Path, project: Path) -> None:
    assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    head = {**json.loads((site / HEAD).read_text()), "latest": 5}
    state = {**json.loads((site / STATE).read_text()), "digest": "sha256:" + "1" * 64}  # the head is read again
    server.state.overrides.update({HEAD: json.dumps(head).encode(), STATE: json.dumps(state).encode()})
    result = run("update", "--registry", server.url)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {server.url}{HEAD}: $.latest is an integer, not string or null; refusing it\n"


def test_the_whole_search_index_of_an_older_registry_is_checked_too(server: RegistryServer, site: Path,
                                                                   project: Path) -> None:
    rows = json.loads((site / SEARCH_INDEX).read_text())
    rows["skills"][0][3] = "csv"
    server.state.overrides[SEARCH_INDEX] = json.dumps(rows).encode()
    server.state.fault(SHARDS_INDEX_PATH, *[Fault(status=404)] * 3)
    result = run("search", "csv", "--registry", server.url)
    assert (result.exit_code, result.stderr) == (1, f"Error: {server.url}{SEARCH_INDEX}: row 1 is not [name, "
                                                    "description, category, tags, headings]; refusing the index\n")
