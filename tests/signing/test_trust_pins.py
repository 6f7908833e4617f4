"""A root pinned in a committed lock binds every use of its registry, driven the way an attacker gets there: a
teammate's real git clone of a project whose lock pins a signed registry, a real server on 127.0.0.1 that switches
to unsigned files or to files signed by another root, a trust store that met the attacker first. Every attack is
refused with one line naming what disagrees, nothing is installed and the committed pin stays as it was."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.client import RegistryServer, commit, edit_csv_profiler, run, tree
from helpers.trust import SKILL, copy_tree, refused, signed_build, signed_builds, signing_registry

from builder.client.trust import TRUST_ROOT_ENV
from builder.signing.metadata import TUF_DIR

OTHER = "csv-profiler"  # locked beside SKILL; v2 of the registry changes it
NEW = "readme-writer"  # a skill the lock does not list yet


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The legitimate signed builds (v1, v2), v2 with its signed metadata removed, and the attacker's signed build
    of the same registry (v2's skills) under a root of its own."""
    base = tmp_path_factory.mktemp("pins")
    made = signed_builds(base)
    unsigned = copy_tree(made["v2"], base / "unsigned-v2")
    shutil.rmtree(unsigned / TUF_DIR)
    hostile_registry, hostile_keys = signing_registry(base / "hostile", "  bins: 16\n")
    edit_csv_profiler(hostile_registry)
    hostile = signed_build(hostile_registry, base / "hostile-site", hostile_keys)
    return {**made, "unsigned": unsigned, "hostile": hostile, "root": made["registry"] / "trust/1.root.json",
            "hostile_root": hostile_registry / "trust/1.root.json"}


@pytest.fixture(autouse=True)
def no_trust_root_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--trust-root` sets its variable in this process: set here, so the monkeypatch takes it away afterwards."""
    monkeypatch.setenv(TRUST_ROOT_ENV, "")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _use(folder: Path, *args: str, url: str | None = None) -> tuple[int, str]:
    cwd = Path.cwd()
    folder.mkdir(parents=True, exist_ok=True)
    os.chdir(folder)
    try:
        result = run(*args, *(("--registry", url) if url else ()))
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output


def _as(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, who: str) -> None:
    """Another user's machine: a trust store of its own (the user state folder)."""
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / f"state-{who}"))


def _clone(project: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(project), str(dest)], check=True, capture_output=True)
    return dest


def _committed(tmp_path: Path, server: RegistryServer, monkeypatch: pytest.MonkeyPatch, *names: str) -> Path:
    """A project whose committed lock pins the signed registry ``server`` serves (installed by its first user,
    whose skill folders are not committed), cloned by a teammate: the clone."""
    _as(monkeypatch, tmp_path, "first-user")
    project = tmp_path / "project"
    code, output = _use(project, "install", *names, url=server.url)
    assert code == 0, output
    (project / ".gitignore").write_text(".claude/\n")
    commit(project, "Lock the team's skills")
    clone = _clone(project, tmp_path / "clone")
    _as(monkeypatch, tmp_path, "teammate")
    return clone


def _pins(project: Path) -> dict[str, str | None]:
    lock = json.loads((project / "skills-lock.json").read_text())
    return {name: entry.get("trust_root") for name, entry in lock["skills"].items()}



@pytest.fixture
def server(sites: dict[str, Path]) -> Iterator[RegistryServer]:
    with RegistryServer(sites["v1"]) as serving:
        yield serving


# --- the host switches to unsigned files ------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("install", OTHER), ("install", NEW), ("install",), ("update",), ("info", SKILL),
                                  ("search", "csv")],
                         ids=["install-locked", "install-new", "restore", "update", "info", "search"])
def test_a_clone_never_reads_unsigned_files_from_a_registry_its_lock_pins(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...]) -> None:
    """The attack is `install NAME` in a fresh clone (it used to install the unsigned files and drop the pin);
    the neighbours are a skill the lock does not list yet, the restore, update and the read-only commands."""
    clone = _committed(tmp_path, server, monkeypatch, SKILL, OTHER)
    assert set(_pins(clone).values()) == {_sha(sites["root"])}
    server.state.root = sites["unsigned"]
    before = tree(clone)
    code, output = _use(clone, *args, url=server.url)
    refused(code, output, clone, before, server.url, "pins root sha256", "publishes no signed metadata",
             "a downgrade", "nothing was installed or changed")


async def _mcp_refusals(url: str, cwd: Path) -> list[str]:
    """What `skillreg mcp` in ``cwd`` answers to each tool and to the Skills extension's listing and reading."""
    from helpers.mcp import request, session
    from mcp.shared.exceptions import MCPError

    answers = []
    async with session(url, cwd=cwd) as client:
        for name, arguments in (("install_skill", {"slug": OTHER}), ("install_skill", {"slug": NEW}),
                                ("get_skill", {"id": SKILL}), ("search_skills", {"query": "csv"})):
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, result.content)
            answers.append(result.content[0].text)
        for method, params in (("skills/list", {}), ("resources/read", {"uri": f"skill://{SKILL}/SKILL.md"})):
            with pytest.raises(MCPError) as refused:
                await request(client, method, params)
            answers.append(str(refused.value))
    return answers


def test_the_mcp_server_of_a_clone_never_reads_unsigned_files_from_a_pinned_registry(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """install_skill is the attack; get_skill, search_skills and the Skills extension's reads are its neighbours."""
    clone = _committed(tmp_path, server, monkeypatch, SKILL, OTHER)
    server.state.root = sites["unsigned"]
    before = tree(clone)
    answers = anyio.run(_mcp_refusals, server.url, clone)
    assert len(answers) == 6 and all("a downgrade" in answer for answer in answers), answers
    assert {k: v for k, v in tree(clone).items() if k != "mcp-stderr.txt"} == before


async def _mcp_before_and_after_the_pin(url: str, cwd: Path, lock: bytes) -> tuple[Any, Any]:
    from helpers.mcp import session

    async with session(url, cwd=cwd) as client:
        before = await client.call_tool("search_skills", {"query": "csv"})
        (cwd / "skills-lock.json").write_bytes(lock)  # a `git pull` brings the lock that pins the registry
        after = await client.call_tool("install_skill", {"slug": OTHER})
    return before, after


def test_a_running_mcp_server_binds_a_pin_that_arrives_with_the_lock(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server read the registry unsigned before the project had a lock; install_skill reads the lock it writes
    to, so the pin that arrived binds the registry it already opened."""
    clone = _committed(tmp_path, server, monkeypatch, SKILL, OTHER)
    lock = (clone / "skills-lock.json").read_bytes()
    server.state.root = sites["unsigned"]
    project = tmp_path / "another-project"
    project.mkdir()
    searched, installed = anyio.run(_mcp_before_and_after_the_pin, server.url, project, lock)
    assert not searched.is_error, searched.content
    assert installed.is_error and "a downgrade" in installed.content[0].text, installed.content
    assert not (project / ".claude").exists()
    assert (project / "skills-lock.json").read_bytes() == lock


# --- a trust store that met the attacker first ------------------------------------------------------------------

def _met_the_attacker(tmp_path: Path, server: RegistryServer, sites: dict[str, Path]) -> None:
    """An earlier first use of the registry's URL, on a hostile network: the trust store keeps the attacker's
    root. The host then serves the attacker's signed update."""
    server.state.root = sites["hostile"]
    code, output = _use(tmp_path / "elsewhere", "info", SKILL, url=server.url)
    assert code == 0 and "trusting the signing keys" in output, output


@pytest.mark.parametrize("args", [("install", OTHER), ("install",), ("update",), ("search", "csv")],
                         ids=["install", "restore", "update", "search"])
def test_a_trust_store_holding_another_root_is_refused_against_the_pin(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...]) -> None:
    """The attack is `install NAME` (the attacker's signed update used to install and the pin to be rewritten to the
    attacker's root); restore, update and search are its neighbours."""
    clone = _committed(tmp_path, server, monkeypatch, SKILL, OTHER)
    _met_the_attacker(tmp_path, server, sites)
    before = tree(clone)
    code, output = _use(clone, *args, url=server.url)
    error = refused(code, output, clone, before, f"skills-lock.json ({SKILL}, {OTHER}) pins root sha256 "
                     f"{_sha(sites['root'])[:12]}…", f"trust store holds root sha256 {_sha(sites['hostile_root'])[:12]}…",
                     f"`skillreg trust pin {server.url}`")
    assert error.count("sha256") == 2


def test_trust_root_never_overrides_the_trust_store_or_the_pin(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--trust-root naming the right root, with a trust store holding the attacker's, is refused (it used to be
    ignored); the neighbour, --trust-root naming another root than the lock pins, is refused too."""
    clone = _committed(tmp_path, server, monkeypatch, SKILL, OTHER)
    _met_the_attacker(tmp_path, server, sites)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    code, output = _use(fresh, "--trust-root", str(sites["root"]), "install", OTHER, url=server.url)
    refused(code, output, fresh, {}, f"--trust-root {sites['root']} pins root sha256 {_sha(sites['root'])[:12]}…",
             f"holds root sha256 {_sha(sites['hostile_root'])[:12]}…",
             f"`skillreg trust pin {server.url} {sites['root']}`")
    _as(monkeypatch, tmp_path, "another-teammate")  # no trust store: only the flag and the lock disagree
    before = tree(clone)
    code, output = _use(clone, "--trust-root", str(sites["hostile_root"]), "install", OTHER, url=server.url)
    refused(code, output, clone, before, f"is root sha256 {_sha(sites['hostile_root'])[:12]}…",
             f"pins root sha256 {_sha(sites['root'])[:12]}…",
             f"`skillreg trust pin {server.url} {sites['hostile_root']}`")


def test_trust_pin_starts_the_trust_store_again_from_the_lock_and_never_from_the_host(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = _committed(tmp_path, server, monkeypatch, SKILL, OTHER)
    pins = _pins(clone)
    _met_the_attacker(tmp_path, server, sites)
    shutil.copytree(tmp_path / "project/.claude", clone / ".claude")  # the skills as the lock has them
    code, output = _use(clone, "verify")
    assert code == 1, output
    assert f"Pinned root: {server.url}: skills-lock.json ({SKILL}, {OTHER}) pins root sha256" in output
    assert "All 2 installed folder(s) match skills-lock.json; 1 pinned root(s) disagree" in output
    shutil.rmtree(clone / ".claude")
    code, output = _use(clone, "trust", "pin", server.url)
    assert code == 0, output
    assert "was emptied" in output and "api/v1/tuf/1.root.json" in output
    before = tree(clone)
    code, output = _use(clone, "install", url=server.url)  # the host still serves the attacker's root
    refused(code, output, clone, before, f"{TUF_DIR}/1.root.json is not the root the lock trusts")
    server.state.root = sites["v2"]
    code, output = _use(clone, "install", url=server.url)
    assert code == 0, output
    assert "trusting the signing keys" not in output
    assert _pins(clone) == pins
    code, output = _use(clone, "update", url=server.url)
    assert code == 0 and f"Updated {OTHER}" in output, output
    assert _pins(clone) == pins
    code, output = _use(clone, "verify")
    assert code == 0 and "Pinned root" not in output, output


# --- update and restore bind the registry before reading any entry ----------------------------------------------

def _half_pinned(tmp_path: Path, server: RegistryServer, sites: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                 unpinned: str = SKILL, pinned: str = OTHER) -> Path:
    """A clone whose lock lists ``unpinned`` without a pin (installed while the registry was unsigned) and
    ``pinned`` with one (installed by a teammate once it signed)."""
    server.state.root = copy_tree(sites["v1"], tmp_path / "unsigned-v1")
    shutil.rmtree(server.state.root / TUF_DIR)
    _as(monkeypatch, tmp_path, "early-user")
    project = tmp_path / "project"
    code, output = _use(project, "install", unpinned, url=server.url)
    assert code == 0, output
    server.state.root = sites["v1"]
    _as(monkeypatch, tmp_path, "later-user")
    code, output = _use(project, "install", pinned, url=server.url)
    assert code == 0, output
    assert _pins(project) == {unpinned: None, pinned: _sha(sites["root"])}
    (project / ".gitignore").write_text(".claude/\n")
    commit(project, "Lock the team's skills")
    clone = _clone(project, tmp_path / "clone")
    _as(monkeypatch, tmp_path, "teammate")
    return clone


@pytest.mark.parametrize("args", [("update",), ("update", SKILL), ("install",)],
                         ids=["update", "update-unpinned", "restore"])
def test_an_unpinned_entry_listed_first_never_opens_a_pinned_registry_unsigned(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...]) -> None:
    """`update` used to open the registry's verifier from the first entry, unpinned, and then update the pinned one
    from the unsigned host; `update` of the unpinned entry alone and the restore are the neighbours: a pin on any
    entry binds the registry for every entry."""
    clone = _half_pinned(tmp_path, server, sites, monkeypatch)
    assert list(_pins(clone)) == [SKILL, OTHER]  # the unpinned entry first
    server.state.root = sites["unsigned"]  # v2: OTHER changed, unsigned
    before = tree(clone)
    code, output = _use(clone, *args, url=server.url)
    refused(code, output, clone, before, f"skills-lock.json ({OTHER}) pins root sha256", "a downgrade")


def test_an_unpinned_entry_updated_from_a_pinned_registry_records_the_pin(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The neighbour that succeeds: signed, the registry updates the unpinned entry, which then records the pin;
    a pin edited to another root afterwards is refused against the trust store."""
    clone = _half_pinned(tmp_path, server, sites, monkeypatch, unpinned=OTHER, pinned=SKILL)
    code, output = _use(clone, "install", url=server.url)
    assert code == 0, output
    server.state.root = sites["v2"]
    code, output = _use(clone, "update", url=server.url)
    assert code == 0 and f"Updated {OTHER}" in output, output
    assert _pins(clone) == {SKILL: _sha(sites["root"]), OTHER: _sha(sites["root"])}
    lock = clone / "skills-lock.json"
    lock.write_text(lock.read_text().replace(_sha(sites["root"]), "0" * 64))
    before = tree(clone)
    code, output = _use(clone, "update", url=server.url)
    refused(code, output, clone, before, "pins root sha256 000000000000…",
             f"trust store holds root sha256 {_sha(sites['root'])[:12]}…")


# --- two roots in one lock, and the command that changes a pin ---------------------------------------------------

def test_a_lock_pinning_two_roots_for_one_registry_is_refused_until_one_is_pinned(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two branches merged, each with an entry pinned to another root (one the attacker's): nothing reads the
    registry, `verify` says so, and `trust pin URL FILE` makes every entry of the registry pin that root."""
    clone = _committed(tmp_path, server, monkeypatch, SKILL, OTHER)
    lock = json.loads((clone / "skills-lock.json").read_text())
    lock["skills"][OTHER]["trust_root"] = _sha(sites["hostile_root"])
    (clone / "skills-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    before = tree(clone)
    for args in (("install", NEW), ("install",), ("search", "csv")):
        code, output = _use(clone, *args, url=server.url)
        refused(code, output, clone, before, f"skills-lock.json ({SKILL}) pins root sha256 {_sha(sites['root'])[:12]}…",
                 f"skills-lock.json ({OTHER}) pins root sha256 {_sha(sites['hostile_root'])[:12]}…",
                 f"skillreg trust pin {server.url} FILE")
    code, output = _use(clone, "verify")
    assert code == 1 and f"Pinned root: {server.url}: skills-lock.json ({SKILL}) pins" in output, output
    code, output = _use(clone, "trust", "pin", server.url)
    assert code == 2 and "give the root file to pin" in output, output
    assert tree(clone) == before
    code, output = _use(clone, "trust", "pin", server.url, str(sites["root"]))
    assert code == 0, output
    assert f"for 2 skill(s) in skills-lock.json, replacing {_sha(sites['hostile_root'])[:12]}…" in output
    assert set(_pins(clone).values()) == {_sha(sites["root"])}
    code, output = _use(clone, "install", url=server.url)
    assert code == 0 and "trusting the signing keys" not in output, output


def test_trust_pin_refuses_a_file_that_is_not_a_root_and_changes_nothing(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = _committed(tmp_path, server, monkeypatch, SKILL)
    not_root = tmp_path / "timestamp.json"
    shutil.copy(sites["v1"] / TUF_DIR / "timestamp.json", not_root)
    forged = tmp_path / "forged.root.json"
    doc = json.loads(sites["root"].read_text())
    doc["signed"]["version"] = 7  # the keys' signature no longer covers it
    forged.write_text(json.dumps(doc))
    before = tree(clone)
    for bad in (not_root, forged):
        code, output = _use(clone, "trust", "pin", server.url, str(bad))
        assert code == 2, output
        assert f"Error: {bad} is not the root metadata of a signed registry" in output and "Traceback" not in output
        assert tree(clone) == before


def test_trust_pin_with_a_file_and_no_lock_starts_the_trust_store_from_it(
        sites: dict[str, Path], server: RegistryServer, tmp_path: Path) -> None:
    """A trust store that trusted the attacker on first use is started again from the registry's own root file,
    with no request: the attacker's signed files are refused, the registry's accepted and pinned from that root."""
    _met_the_attacker(tmp_path, server, sites)
    project = tmp_path / "p"
    code, output = _use(project, "trust", "pin", server.url, str(sites["root"]))
    assert code == 0, output
    assert "lists no skill from" in output and "now starts from" in output
    assert not (project / "skills-lock.json").exists()
    code, output = _use(project, "install", SKILL, url=server.url)
    assert code != 0 and "not signed by the keys this client trusts" in output, output
    server.state.root = sites["v1"]
    code, output = _use(project, "install", SKILL, url=server.url)
    assert code == 0 and "trusting the signing keys" not in output, output
    assert _pins(project) == {SKILL: _sha(sites["root"])}
