"""The package's shape, read from its source: every import of every module under builder/, including imports
made inside functions, forms an acyclic graph in which the pipeline's lower stages never import higher ones.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

from builder.cli.app import REGISTRY_EXTRA_MODULES

PACKAGE = REPO / "builder"
# Each stage and what it may import besides itself (and the package root, which holds only __version__).
ALLOWED = {
    "core": set(),
    "signing": {"core"},
    "validate": {"core"},
    "site": {"core"},
    "publish": {"core", "signing", "validate", "site"},
    "client": {"core", "signing"},
    "ops": {"core", "signing", "validate", "site", "publish", "client"},
    "cli": {"core", "signing", "validate", "site", "publish", "client", "ops"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The builder modules ``name`` imports anywhere in its source: at the top, in functions, under ``if``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # `from . import client`
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports_of(name) for name in MODULES}


def stage(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "root"


def test_every_module_is_in_a_stage() -> None:
    assert {stage(m) for m in MODULES} == set(ALLOWED) | {"root"}


def test_imports_inside_functions_are_seen() -> None:
    # `skillreg build` imports the build when it runs, inside the command's function.
    assert "builder.publish.build" in GRAPH["builder.cli.registry"]
    assert "builder.client.mcp_server" in GRAPH["builder.cli.client"]


def test_there_is_no_import_cycle() -> None:
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            pytest.fail("import cycle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        for target in sorted(GRAPH[name]):
            visit(target, path + [name])
        done.add(name)

    for name in MODULES:
        visit(name, [])


def test_lower_stages_never_import_higher_ones() -> None:
    wrong = sorted(f"{name} imports {target}" for name, targets in GRAPH.items() for target in targets
                   if stage(target) not in {stage(name), "root"} | ALLOWED.get(stage(name), set()))
    assert wrong == []


def test_nothing_imports_the_cli_and_the_client_needs_only_core_and_signing() -> None:
    assert sorted(f"{n} imports {t}" for n, ts in GRAPH.items() if stage(n) != "cli"
                  for t in ts if stage(t) == "cli") == []
    client = {t for n, ts in GRAPH.items() if stage(n) == "client" for t in ts}
    assert {stage(t) for t in client} <= {"client", "core", "signing", "root"}


def test_publish_holds_only_the_build_pipeline() -> None:
    """The commands that act on a registry without building it live in ops/; signing is its own package."""
    assert {"builder.ops.serve", "builder.ops.upload", "builder.ops.deploy", "builder.ops.scaffold",
            "builder.ops.codec", "builder.ops.prompt", "builder.ops.trust_previous"} <= set(MODULES)
    publish = {name for name in MODULES if stage(name) == "publish"}
    assert not {n for n in publish if n.rpartition(".")[2] in {"serve", "objectstore", "upload", "deploy", "scaffold",
                                                               "codec", "prompt", "trust", "trustbins", "trustkeys"}}
    assert sorted(n for n, ts in GRAPH.items() if "builder.publish.build" in ts) == [
        "builder.cli.registry", "builder.ops.serve"]


def test_the_client_imports_nothing_from_the_registry_extra() -> None:
    """A client-only install lacks the `registry` extra: loading every client module must not need it."""
    client = sorted(name for name in MODULES if name.startswith("builder.client"))
    probe = ("import sys\n" + "".join(f"import {name}\n" for name in [*client, "builder.cli.app", "builder.cli.client"])
             + "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not set(done.stdout.split()) & REGISTRY_EXTRA_MODULES


def test_search_is_split_by_who_uses_it() -> None:
    """The ranking both halves follow lives in core; the shard writer is the build's alone and the sharded reader,
    with its thread pool, the client's alone."""
    def stages_importing(target: str) -> set[str]:
        return {stage(name) for name, targets in GRAPH.items() if target in targets}

    assert stages_importing("builder.publish.search_shards") == {"publish"}
    assert stages_importing("builder.client.search") == {"client", "cli"}
    assert {"publish", "client", "site"} <= stages_importing("builder.core.search")
    assert not GRAPH["builder.core.search"] & {"builder.publish.search_shards", "builder.client.search"}


# The build's parts below its pipeline (publish.build): what each may import from publish/ besides itself.
BUILD_PARTS = {
    "builder.publish.transaction": set(),  # the output transaction: locks, journal, swap, trash
    "builder.publish.folder_changes": set(),  # change detection: folder signatures
    "builder.publish.outcome": {"builder.publish.api", "builder.publish.manifest", "builder.publish.provenance"},
    "builder.publish.documents": {"builder.publish.manifest", "builder.publish.outcome",
                                  "builder.publish.provenance", "builder.publish.search_shards",
                                  "builder.publish.transaction"},
    "builder.publish.git_objects": {"builder.publish.bundlecache"},  # the cat-file reader of history
}
# The website's parts below its page filling (site.pages): each imports nothing else of site/.
SITE_PARTS = ("builder.site.sitemaps", "builder.site.mkdocs_run", "builder.site.page_templates", "builder.site.plan")


def test_the_build_pipeline_sits_above_its_parts() -> None:
    for part, allowed in BUILD_PARTS.items():
        assert {t for t in GRAPH[part] if stage(t) == "publish"} <= allowed, part
    parts = [*BUILD_PARTS, "builder.publish.skill_output"]
    assert [p for p in parts if "builder.publish.build" in GRAPH[p]] == []
    assert sorted(n for n, ts in GRAPH.items() if "builder.publish.skill_output" in ts) == ["builder.publish.build"]


def test_the_website_sits_above_its_parts_and_holds_no_benchmark_variant() -> None:
    for part in SITE_PARTS:
        assert {t for t in GRAPH[part] if stage(t) == "site"} == set(), part
    assert "naive" not in MODULES["builder.site.pages"].read_text(encoding="utf-8")  # bench/naive_site.py's


def test_the_client_and_the_build_swap_and_remove_folders_with_one_pair_of_primitives() -> None:
    for user in ("builder.client.install", "builder.publish.transaction"):
        tree = ast.parse(MODULES[user].read_text(encoding="utf-8"))
        taken = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 and node.module == "core.fs" for alias in node.names}
        renames = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and isinstance(node.func, ast.Attribute) and node.func.attr in ("rmtree", "exchange")]
        assert {"swap_into", "remove_path"} <= taken, user
        assert renames == [], user
