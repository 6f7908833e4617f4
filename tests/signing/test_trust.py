"""Signed registries: a real signed build served on 127.0.0.1, real keys from `skillreg trust init`, and python-tuf's
client as the verifier. Every attack is refused with one line and nothing on disk changed; untampered, it installs."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from helpers.client import RegistryServer, commit, run, tree
from helpers.trust import SKILL, copy_tree, refused, signed_build, signed_builds
from securesystemslib.signer import CryptoSigner
from tuf.api.metadata import Metadata, Root
from tuf.api.serialization.json import JSONSerializer

from builder.core.config import load_config
from builder.signing.metadata import TUF_DIR, refresh_timestamp, sign_output


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return signed_builds(tmp_path_factory.mktemp("signed"))


def _install(url: str, project: Path, *args: str) -> tuple[int, str]:
    cwd = Path.cwd()
    project.mkdir(exist_ok=True)
    os.chdir(project)
    try:
        result = run(*args, "--registry", url)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output



def test_keys_are_private_and_never_overwritten(signed: dict[str, Path]) -> None:
    for role in ("root", "targets", "snapshot", "timestamp"):
        assert stat.S_IMODE((signed["keys"] / f"{role}.pem").stat().st_mode) == 0o600
    before = (signed["keys"] / "root.pem").read_bytes()
    cwd = Path.cwd()
    os.chdir(signed["registry"])
    try:
        result = run("trust", "init", str(signed["keys"]))
    finally:
        os.chdir(cwd)
    assert result.exit_code != 0
    assert "already exists" in result.output
    assert (signed["keys"] / "root.pem").read_bytes() == before


def test_a_signed_build_publishes_the_metadata_and_one_target_per_skill(signed: dict[str, Path]) -> None:
    tuf = signed["v1"] / TUF_DIR
    names = sorted(p.name for p in tuf.iterdir())
    assert "timestamp.json" in names and "1.root.json" in names
    assert len([n for n in names if ".bins-" in n]) == 16
    digests = json.loads((signed["v1"] / f"api/v1/skills/{SKILL}/digests.json").read_text())
    detail = json.loads((signed["v1"] / f"api/v1/skills/{SKILL}.json").read_text())
    zip_path = detail["bundles"]["zip"]["path"]
    assert digests["files"][zip_path]["sha256"] == detail["bundles"]["zip"]["sha256"]


def test_a_rebuild_keeps_the_bytes_of_unchanged_metadata(signed: dict[str, Path]) -> None:
    """v2 changed one skill: its bin, targets, snapshot and timestamp are new; the other bins keep v1's bytes."""
    v1 = {p.name: p.read_bytes() for p in (signed["v1"] / TUF_DIR).iterdir()}
    v2 = {p.name: p.read_bytes() for p in (signed["v2"] / TUF_DIR).iterdir()}
    bins_v2 = {n for n in v2 if ".bins-" in n}
    assert len(bins_v2 - set(v1)) == 1
    assert len(bins_v2 & set(v1)) == 15 and all(v1[n] == v2[n] for n in bins_v2 & set(v1))


def test_signing_again_changes_only_the_timestamp(signed: dict[str, Path], tmp_path: Path) -> None:
    config = load_config(signed["registry"] / "registry.yaml")
    site = copy_tree(signed["v2"], tmp_path / "site")
    before = tree(site)
    sign_output(config, site, signed["keys"])
    after = tree(site)
    timestamp = f"{TUF_DIR}/timestamp.json"
    assert {k: v for k, v in after.items() if k != timestamp} == {k: v for k, v in before.items() if k != timestamp}
    assert after[timestamp] != before[timestamp]


def test_cold_signing_of_one_commit_is_byte_identical_but_for_the_timestamp(signed: dict[str, Path],
                                                                             tmp_path: Path) -> None:
    config = load_config(signed["registry"] / "registry.yaml")
    made = []
    for attempt in ("a", "b"):
        site = copy_tree(signed["v2"], tmp_path / attempt)
        shutil.rmtree(site / TUF_DIR)
        sign_output(config, site, signed["keys"], previous_dir=tmp_path / "none")
        made.append({k: v for k, v in tree(site).items() if not k.endswith("timestamp.json")})
    assert made[0] == made[1]
    versions = {json.loads(data)["signed"]["version"] for rel, (data, _) in made[0].items()
                if rel.startswith(TUF_DIR) and ".root." not in rel}
    assert versions == {3}  # the first-parent commit count: never below what an earlier build published


def test_untampered_installs_and_trusts_on_first_use(signed: dict[str, Path], tmp_path: Path) -> None:
    with RegistryServer(signed["v1"]) as server:
        code, output = _install(server.url, tmp_path / "p", "install", SKILL)
    assert code == 0, output
    assert output.count("trusting the signing keys") == 1
    assert (tmp_path / "p" / ".claude/skills" / SKILL / "SKILL.md").is_file()


def _rewrite_zip_everywhere(site: Path) -> None:
    """A host that replaces the skill's zip and rewrites every JSON document to match it."""
    detail_path = site / f"api/v1/skills/{SKILL}.json"
    detail = json.loads(detail_path.read_text())
    zip_rel = detail["bundles"]["zip"]["path"]
    evil = (site / zip_rel).read_bytes() + b"\0"
    (site / zip_rel).write_bytes(evil)
    import hashlib

    sha = hashlib.sha256(evil).hexdigest()
    old_sha = detail["bundles"]["zip"]["sha256"]
    for path in site.rglob("*.json"):
        if TUF_DIR in path.as_posix():
            continue
        text = path.read_text()
        if old_sha in text:
            text = text.replace(old_sha, sha)
            doc = json.loads(text)
            path.write_text(json.dumps(doc).replace(f'"size": {detail["bundles"]["zip"]["size"]}',
                                                    f'"size": {len(evil)}'))
    digests = site / f"api/v1/skills/{SKILL}/digests.json"
    doc = json.loads(digests.read_text())
    doc["files"][zip_rel] = {"length": len(evil), "sha256": sha}
    digests.write_text(json.dumps(doc))


def test_a_replaced_zip_with_every_document_rewritten_isrefused(signed: dict[str, Path], tmp_path: Path) -> None:
    site = copy_tree(signed["v1"], tmp_path / "site")
    _rewrite_zip_everywhere(site)
    project = tmp_path / "p"
    project.mkdir()
    before = tree(project)
    with RegistryServer(site) as server:
        code, output = _install(server.url, project, "install", SKILL)
    refused(code, output, project, before, "was tampered with", "nothing was installed")


def test_a_digests_json_served_longer_than_its_signed_length_is_refused_as_tampered(signed: dict[str, Path],
                                                                                     tmp_path: Path) -> None:
    site = copy_tree(signed["v1"], tmp_path / "site")
    digests = site / f"api/v1/skills/{SKILL}/digests.json"
    digests.write_bytes(digests.read_bytes() + b" " * 64)  # the same JSON, longer than the signed length
    project = tmp_path / "p"
    project.mkdir()
    before = tree(project)
    with RegistryServer(site) as server:
        code, output = _install(server.url, project, "install", SKILL)
    refused(code, output, project, before, "was tampered with", "larger than its signed length")


def test_an_older_signed_build_after_a_newer_one_isrefused(signed: dict[str, Path], tmp_path: Path) -> None:
    project = tmp_path / "p"
    with RegistryServer(signed["v2"]) as server:
        code, output = _install(server.url, project, "install", SKILL)
        assert code == 0, output
        before = tree(project)
        server.state.root = signed["v1"]
        code, output = _install(server.url, project, "update")
    refused(code, output, project, before, "older than already seen", "rollback")


def test_expired_metadata_is_refused_with_its_date(signed: dict[str, Path], tmp_path: Path) -> None:
    site = copy_tree(signed["v2"], tmp_path / "site")
    past = dt.datetime.now(dt.UTC) - dt.timedelta(days=30)
    refresh_timestamp(load_config(signed["registry"] / "registry.yaml"), site, signed["keys"], now=past)
    expires = json.loads((site / TUF_DIR / "timestamp.json").read_text())["signed"]["expires"]
    project = tmp_path / "p"
    project.mkdir()
    before = tree(project)
    with RegistryServer(site) as server:
        code, output = _install(server.url, project, "install", SKILL)
    refused(code, output, project, before, f"expired on {expires}", "skillreg trust refresh")


def test_signed_metadata_removed_is_a_refused_downgrade(signed: dict[str, Path], tmp_path: Path) -> None:
    unsigned = copy_tree(signed["v2"], tmp_path / "site")
    shutil.rmtree(unsigned / TUF_DIR)
    project = tmp_path / "p"
    with RegistryServer(signed["v2"]) as server:
        code, output = _install(server.url, project, "install", SKILL)
        assert code == 0, output
        before = tree(project)
        server.state.root = unsigned
        code, output = _install(server.url, project, "info", SKILL)
    refused(code, output, project, before, "downgrade")


def test_a_root_signed_by_an_unknown_key_isrefused(signed: dict[str, Path], tmp_path: Path) -> None:
    site = copy_tree(signed["v2"], tmp_path / "site")
    project = tmp_path / "p"
    with RegistryServer(site) as server:
        code, output = _install(server.url, project, "info", SKILL)
        assert code == 0, output
        root = Metadata[Root].from_bytes((site / TUF_DIR / "1.root.json").read_bytes()).signed
        stranger = CryptoSigner.generate_ed25519()
        for keyid in list(root.roles["root"].keyids):
            root.revoke_key(keyid, "root")
        root.add_key(stranger.public_key, "root")
        root.version = 2
        forged = Metadata(root)
        forged.sign(stranger)
        (site / TUF_DIR / "2.root.json").write_bytes(forged.to_bytes(JSONSerializer()))
        before = tree(project)
        code, output = _install(server.url, project, "install", SKILL)
    refused(code, output, project, before, "unknown key", f"skillreg trust pin {server.url} FILE")


def test_a_bin_of_another_skill_swapped_in_isrefused(signed: dict[str, Path], tmp_path: Path) -> None:
    from tuf.api.metadata import SuccinctRoles

    site = copy_tree(signed["v2"], tmp_path / "site")
    succinct = SuccinctRoles([], 1, 4, "bins")
    ours = succinct.get_role_for_target(f"api/v1/skills/{SKILL}/digests.json")
    snapshot_version = json.loads((site / TUF_DIR / "timestamp.json").read_text())["signed"]["meta"][
        "snapshot.json"]["version"]
    meta = json.loads((site / TUF_DIR / f"{snapshot_version}.snapshot.json").read_text())["signed"]["meta"]
    other = next(role for role in (f"bins-{n:x}" for n in range(16)) if role != ours
                 and json.loads((site / TUF_DIR / f"{meta[role + '.json']['version']}.{role}.json").read_text())[
                     "signed"]["targets"])
    ours_file = site / TUF_DIR / f"{meta[ours + '.json']['version']}.{ours}.json"
    ours_file.write_bytes((site / TUF_DIR / f"{meta[other + '.json']['version']}.{other}.json").read_bytes())
    project = tmp_path / "p"
    project.mkdir()
    before = tree(project)
    with RegistryServer(site) as server:
        code, output = _install(server.url, project, "install", SKILL)
    refused(code, output, project, before)


@pytest.mark.parametrize("role", ["timestamp", "root"])
def test_a_rotated_key_is_followed_by_a_client_that_trusted_the_old_root(signed: dict[str, Path], tmp_path: Path,
                                                                         role: str) -> None:
    registry = copy_tree(signed["registry"], tmp_path / "registry")
    keys = copy_tree(signed["keys"], tmp_path / "keys")
    old = signed_build(registry, tmp_path / "old", keys)
    project = tmp_path / "p"
    with RegistryServer(old) as server:
        code, output = _install(server.url, project, "info", SKILL)
        assert code == 0, output
        cwd = Path.cwd()
        os.chdir(registry)
        try:
            result = run("trust", "rotate", role, "--keys", str(keys))
        finally:
            os.chdir(cwd)
        assert result.exit_code == 0, result.output
        commit(registry, f"trust: rotate the {role} key")
        server.state.root = signed_build(registry, tmp_path / "new", keys)
        code, output = _install(server.url, project, "install", SKILL)
    assert code == 0, output
    assert "trusting the signing keys" not in output  # the old root was followed, not trusted again
    assert (project / ".claude/skills" / SKILL / "SKILL.md").is_file()


def test_the_lock_records_the_root_and_a_fresh_clone_verifies_against_it(signed: dict[str, Path], tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "p"
    with RegistryServer(signed["v2"]) as server:
        code, output = _install(server.url, project, "install", SKILL)
        assert code == 0, output
        lock = json.loads((project / "skills-lock.json").read_text())
        root_sha = lock["skills"][SKILL]["trust_root"]
        import hashlib

        assert root_sha == hashlib.sha256((signed["v2"] / TUF_DIR / "1.root.json").read_bytes()).hexdigest()
        shutil.rmtree(project / ".claude")
        monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / "teammate-state"))  # a teammate: no trust store
        code, output = _install(server.url, project, "install")
        assert code == 0, output
        assert "trusting the signing keys" not in output
        assert (project / ".claude/skills" / SKILL / "SKILL.md").is_file()
        unsigned = copy_tree(signed["v2"], tmp_path / "unsigned")
        shutil.rmtree(unsigned / TUF_DIR)
        server.state.root = unsigned
        shutil.rmtree(project / ".claude")
        monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / "another-state"))
        before = tree(project)
        code, output = _install(server.url, project, "install")
    refused(code, output, project, before, "downgrade")


def test_search_reads_a_signed_registry_and_refuses_a_rewritten_search_manifest(signed: dict[str, Path],
                                                                                tmp_path: Path) -> None:
    site = copy_tree(signed["v2"], tmp_path / "site")
    with RegistryServer(site) as server:
        code, output = _install(server.url, tmp_path / "p", "search", "csv")
        assert code == 0, output
        assert "csv-profiler" in output
        manifest = site / "api/v1/search/index.json"
        manifest.write_bytes(manifest.read_bytes() + b"\n")  # still JSON, other bytes
        code, output = _install(server.url, tmp_path / "p", "search", "csv")
    assert code != 0
    assert "api/v1/search/index.json was tampered with" in output


def test_check_deploy_warns_when_the_live_timestamp_expires_within_two_days(signed: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    site = copy_tree(signed["v2"], tmp_path / "site")
    commit_sha = json.loads((site / "api/v1/index.json").read_text())["source"]["commit"]
    with RegistryServer(site) as server:
        fresh = run("check-deploy", server.url, "--commit", commit_sha, "--timeout", "0")
        refresh_timestamp(load_config(signed["registry"] / "registry.yaml"), site, signed["keys"],
                          now=dt.datetime.now(dt.UTC) - dt.timedelta(days=6))
        expiring = run("check-deploy", server.url, "--commit", commit_sha, "--timeout", "0")
    assert fresh.exit_code == 0 and "Warning" not in fresh.output
    assert expiring.exit_code == 0
    assert "timestamp.json expires" in expiring.output and "skillreg trust refresh" in expiring.output


def test_the_mcp_server_verifies_a_signed_registry(signed: dict[str, Path], tmp_path: Path) -> None:
    import anyio
    from helpers.client import mcp_session

    site = copy_tree(signed["v2"], tmp_path / "site")
    project = tmp_path / "project"
    project.mkdir()
    with RegistryServer(site) as server:
        _, (good,) = anyio.run(mcp_session, server.url, project, [("get_skill", {"id": SKILL})])
        detail = site / f"api/v1/skills/{SKILL}.json"
        detail.write_bytes(detail.read_bytes().replace(b"Architecture", b"Arch1tecture", 1))
        _, (bad,) = anyio.run(mcp_session, server.url, project, [("get_skill", {"id": SKILL})])
    assert not good.is_error, good.content
    assert bad.is_error
    assert "was tampered with" in bad.content[0].text


def test_a_cold_build_given_the_last_published_metadata_keeps_unchanged_bins(signed: dict[str, Path], tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """As pages.yml builds: from scratch, with the live site's api/v1/tuf/ restored outside the work tree."""
    restored = copy_tree(signed["v1"] / TUF_DIR, tmp_path / "restored")
    tampered = next(p for p in sorted(restored.iterdir()) if ".bins-" in p.name)
    doc = json.loads(tampered.read_text())
    doc["signatures"][0]["sig"] = "00" * 64
    tampered.write_text(json.dumps(doc))  # a bad copy is never published: that bin is signed again
    monkeypatch.setenv("SKILLREG_TRUST_PREVIOUS", str(restored))
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / "ci-state"))
    cold = signed_build(signed["registry"], tmp_path / "cold", signed["keys"])
    v1 = {p.name: p.read_bytes() for p in (signed["v1"] / TUF_DIR).iterdir()}
    made = {p.name: p.read_bytes() for p in (cold / TUF_DIR).iterdir()}
    kept = {n for n in made if ".bins-" in n and made[n] == v1.get(n)}
    assert len(kept) == 14  # 16 bins: the changed skill's and the damaged one are signed again
    assert tampered.name not in kept
