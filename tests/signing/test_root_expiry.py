"""A signed registry's root lasts a year: the build, `trust refresh` and `check-deploy` warn a month ahead, `skillreg
trust renew-root` signs the next root with the same keys, and a client that trusts the old root follows it; once
it has lapsed, the client's refusal names the step that helps. Real keys, real builds on 127.0.0.1, and the real
client under libfaketime."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.client import SKILLREG, RegistryServer, commit, run, tree
from helpers.trust import SKILL, faketime_program, signing_registry
from tuf.api.metadata import Metadata, Root

from builder.core.config import load_config
from builder.signing.keys import ROOT_DAYS, renew_root
from builder.signing.metadata import TUF_DIR, refresh_timestamp


def _in(folder: Path, *args: str) -> tuple[int, str]:
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        result = run(*args)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output


def _root(path: Path) -> Root:
    return Metadata[Root].from_bytes(path.read_bytes()).signed


def _warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("Warning:")]


def test_renew_root_signs_the_next_root_with_the_same_keys_and_a_year_more(tmp_path: Path) -> None:
    registry, keys = signing_registry(tmp_path, "")
    code, output = _in(registry, "trust", "renew-root", "--keys", str(keys))
    assert code == 0, output
    assert output.startswith(f"Wrote trust/2.root.json, expiring in {ROOT_DAYS} days")
    first, second = _root(registry / "trust/1.root.json"), _root(registry / "trust/2.root.json")
    assert second.version == 2 and second.keys == first.keys and second.roles == first.roles
    assert dt.timedelta(days=ROOT_DAYS - 1) < second.expires - dt.datetime.now(dt.UTC) <= dt.timedelta(days=ROOT_DAYS)
    renewed = Metadata[Root].from_bytes((registry / "trust/2.root.json").read_bytes())
    first.verify_delegate(Root.type, renewed.signed_bytes, renewed.signatures)  # the old root's keys signed it


def test_renew_root_refuses_a_root_key_the_root_does_not_trust(tmp_path: Path) -> None:
    registry, keys = signing_registry(tmp_path, "")
    _, other = signing_registry(tmp_path / "other", "")
    code, output = _in(registry, "trust", "renew-root", "--keys", str(other))
    assert code != 0
    assert output.strip() == (f"Error: {other}/root.pem is not the root key root version 1 trusts; renewing the "
                              "root needs it")
    assert sorted(p.name for p in (registry / "trust").iterdir()) == ["1.root.json"]


def test_build_refresh_and_check_deploy_warn_a_month_before_the_root_expires(tmp_path: Path) -> None:
    registry, keys = signing_registry(tmp_path, "")
    now = dt.datetime.now(dt.UTC)
    renew_root(load_config(registry / "registry.yaml"), keys, now=now - dt.timedelta(days=ROOT_DAYS - 20))
    commit(registry, "trust: a root that expires in 20 days")
    site = tmp_path / "site"
    for command in (("build", "--no-site", "--out", str(site), "--sign", str(keys)),
                    ("trust", "refresh", "--sign", str(keys), "--out", str(site))):
        code, output = _in(registry, *command)
        assert code == 0, output
        assert len(_warnings(output)) == 1, output
        assert _warnings(output)[0].startswith(
            f"Warning: {registry / 'trust/2.root.json'}, the registry's root, expires ")
        assert "(in 19 days)" in output or "(in 20 days)" in output, output
        assert "`skillreg trust renew-root --keys KEYS`" in output
    commit_sha = json.loads((site / "api/v1/index.json").read_text())["source"]["commit"]
    with RegistryServer(site) as server:
        checked = run("check-deploy", server.url, "--commit", commit_sha, "--timeout", "0")
    assert checked.exit_code == 0, checked.output
    assert _warnings(checked.output) == [line for line in _warnings(checked.output)
                                         if line.startswith(f"Warning: {server.url}{TUF_DIR}/2.root.json, the "
                                                            "registry's root, expires ")]
    assert len(_warnings(checked.output)) == 1 and "skillreg trust renew-root" in checked.output


def test_a_client_refuses_a_lapsed_root_naming_renew_root_and_follows_the_renewed_one(tmp_path: Path) -> None:
    """The client trusts root 1; a year and more later (the timestamp refreshed, only the root lapsed) it refuses
    the registry in one line naming `trust renew-root`; the maintainer renews the root then, rebuilds, and the
    same client, still trusting root 1, follows the chain to root 2 and installs."""
    faketime = faketime_program()
    registry, keys = signing_registry(tmp_path, "  bins: 16\n")
    config = load_config(registry / "registry.yaml")
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=ROOT_DAYS + 30)
    offset = f"+{ROOT_DAYS + 30}d"
    site = tmp_path / "site"
    code, output = _in(registry, "build", "--no-site", "--out", str(site), "--sign", str(keys))
    assert code == 0, output
    project = tmp_path / "p"
    project.mkdir()

    def client(url: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([faketime, "-f", offset, str(SKILLREG), *args, "--registry", url], cwd=project,
                              capture_output=True, text=True, timeout=300)

    with RegistryServer(site) as server:
        assert _in(project, "info", SKILL, "--registry", server.url)[0] == 0  # root 1 trusted, today
        refresh_timestamp(config, site, keys, now=later)
        before = tree(project)
        lapsed = client(server.url, "install", SKILL)
        assert lapsed.returncode != 0
        errors = [line for line in lapsed.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, lapsed.stderr
        expires = json.loads((registry / "trust/1.root.json").read_text())["signed"]["expires"]
        assert f"{TUF_DIR}/1.root.json: the registry's root expired on {expires}" in errors[0], errors[0]
        assert "`skillreg trust renew-root`" in errors[0] and "trust refresh" not in errors[0]
        assert "Traceback" not in lapsed.stderr and tree(project) == before

        renewed = subprocess.run([faketime, "-f", offset, str(SKILLREG), "trust", "renew-root", "--keys", str(keys)],
                                 cwd=registry, capture_output=True, text=True, timeout=300)
        assert renewed.returncode == 0, renewed.stderr
        commit(registry, "trust: renew the root")
        rebuilt = subprocess.run([faketime, "-f", offset, str(SKILLREG), "build", "--no-site", "--out", str(site),
                                  "--sign", str(keys)], cwd=registry, capture_output=True, text=True, timeout=600)
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert "renew-root" not in rebuilt.stderr  # the renewed root lasts another year from the moved clock
        followed = client(server.url, "install", SKILL)
    assert followed.returncode == 0, followed.stderr
    assert "trusting the signing keys" not in followed.stderr  # root 1 was followed, not trusted afresh
    assert (project / ".claude/skills" / SKILL / "SKILL.md").is_file()


@pytest.mark.parametrize("served", ["no signed metadata", "a root that lasts"])
def test_check_deploy_says_nothing_of_a_root_that_is_absent_or_lasts(served: str, tmp_path: Path) -> None:
    registry, keys = signing_registry(tmp_path, "")
    site = tmp_path / "site"
    code, output = _in(registry, "build", "--no-site", "--out", str(site), "--sign", str(keys))
    assert code == 0 and not _warnings(output), output
    if served == "no signed metadata":
        shutil.rmtree(site / TUF_DIR)
    commit_sha = json.loads((site / "api/v1/index.json").read_text())["source"]["commit"]
    with RegistryServer(site) as server:
        checked = run("check-deploy", server.url, "--commit", commit_sha, "--timeout", "0")
    assert checked.exit_code == 0 and not _warnings(checked.output), checked.output
