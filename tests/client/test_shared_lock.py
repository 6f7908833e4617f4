"""One ``skills-lock.json`` for two clients: ``skillreg`` and vercel's ``skills`` CLI (pinned in tests/foreign),
both against a real build served on 127.0.0.1, in either order, with vercel's restore and update in between."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from helpers.client import RegistryServer, run, source_files, tree
from helpers.foreign import NODE, installed_files, skills_add, skills_run

from builder.client.folder_hash import collated, folder_hash
from builder.publish.schemas import load_schema

CSV, ADR = "csv-profiler", "adr-writer"


def lock_of(project: Path) -> dict:
    """The lock, checked against the schema the package ships for it."""
    data = json.loads((project / "skills-lock.json").read_text())
    jsonschema.validate(data, load_schema("lock"))
    return data


def pairs(project: Path, name: str) -> list:
    """An entry as its (key, value) pairs in file order: what "kept as it was" compares."""
    data = json.loads((project / "skills-lock.json").read_text(), object_pairs_hook=lambda p: p)
    return dict(dict(data)["skills"])[name]


def foreign_line(listed: str, name: str) -> str:
    """The line of ``skillreg list`` that shows ``name`` as another tool's (empty when there is none)."""
    return next((line for line in listed.splitlines() if line.split()[:1] == [name]
                 and "  installed by another tool (" in line), "")


def ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output


def test_vercel_add_after_skillreg_install_keeps_our_entry(site: Path, skills_cli: list[str], project: Path) -> None:
    with RegistryServer(site) as server:
        ok(run("install", CSV, "--registry", server.url))
        ours = pairs(project, CSV)
        entry = lock_of(project)["skills"][CSV]
        assert entry["sourceType"] == "well-known" and entry["source"] == "127.0.0.1"
        assert entry["sourceUrl"] == f"{server.url}api/v1/skills/{CSV}"
        assert entry["wellKnownDigest"] == "sha256:" + json.loads(
            (site / f"api/v1/skills/{CSV}.json").read_text())["bundles"]["zip"]["sha256"]
        done = skills_add(skills_cli, f"{server.url}api/v1/skills/{ADR}", project)
        assert done.returncode == 0, done.stdout + done.stderr
        assert pairs(project, CSV) == ours  # vercel's writer kept our entry, every field
        assert lock_of(project)["version"] == 1 and sorted(lock_of(project)["skills"]) == [ADR, CSV]
        listed = run("list").stdout
        assert foreign_line(listed, ADR).endswith(f"(well-known: {server.url}api/v1/skills/{ADR})")
        assert listed.startswith(CSV)
        verified = run("verify")
        assert verified.exit_code == 0 and verified.stdout.endswith("All 2 installed folder(s) match skills-lock.json\n")
        (project / ".claude/skills" / ADR / "SKILL.md").write_text("edited\n")
        assert run("verify").exit_code == 1
        shutil.rmtree(project / ".claude/skills" / CSV)
        ok(run("install", "--frozen", "--registry", server.url))
    assert tree(project / ".claude/skills" / CSV) == source_files(site, CSV)
    assert pairs(project, CSV) == ours


def test_skillreg_after_vercel_add_keeps_vercels_entry(site: Path, skills_cli: list[str], project: Path) -> None:
    with RegistryServer(site) as server:
        done = skills_add(skills_cli, f"{server.url}api/v1/skills/{ADR}", project)
        assert done.returncode == 0, done.stdout + done.stderr
        theirs = pairs(project, ADR)
        ok(run("install", CSV, "--registry", server.url))
        ok(run("update", "--registry", server.url))
        ok(run("list"))
        ok(run("verify"))
        refused = run("remove", ADR)
        assert refused.exit_code == 2 and "installed by another tool" in refused.stderr
        ok(run("remove", CSV))
        assert pairs(project, ADR) == theirs
        assert sorted(lock_of(project)["skills"]) == [ADR]
        # vercel's computedHash of the folder it wrote is the one ours computes, and so is ours for our install
        assert folder_hash(project / ".claude/skills" / ADR) == dict(theirs)["computedHash"]
        refused = run("install", ADR, "--registry", server.url)
        assert refused.exit_code == 1 and refused.stderr == (
            f"Error: {ADR} is in skills-lock.json from another tool (well-known source); use --force to install it "
            "with skillreg instead (the entry then becomes ours)\n")
        assert pairs(project, ADR) == theirs
        ok(run("install", ADR, "--force", "--registry", server.url))
        assert lock_of(project)["skills"][ADR]["computedHash"] == dict(theirs)["computedHash"]
        assert lock_of(project)["skills"][ADR]["targets"] == [f".claude/skills/{ADR}"]


def test_vercel_restore_after_skillreg_install_gives_the_same_files(site: Path, skills_cli: list[str],
                                                                    project: Path, tmp_path: Path) -> None:
    with RegistryServer(site) as server:
        ok(run("install", CSV, ADR, "--registry", server.url))
        ours = lock_of(project)["skills"]
        clone = tmp_path / "clone"
        clone.mkdir()
        shutil.copy(project / "skills-lock.json", clone / "skills-lock.json")
        done = skills_run(skills_cli, clone, "experimental_install")
        assert done.returncode == 0, done.stdout + done.stderr
        for name in (CSV, ADR):
            assert installed_files(clone / ".agents/skills" / name) == installed_files(project / ".claude/skills" / name)
            # vercel's restore replaced our entry with its own: the same computedHash, and it is now theirs
            assert lock_of(clone)["skills"][name]["computedHash"] == ours[name]["computedHash"]
            assert "digest" not in lock_of(clone)["skills"][name]
        rewritten = (clone / "skills-lock.json").read_bytes()
        listed = run_in(clone, "list")
        assert foreign_line(listed.stdout, CSV)
        verified = run_in(clone, "verify")
        assert verified.exit_code == 0, verified.output
        assert f"ok        {CSV}  .agents/skills/{CSV}" in verified.stdout
        # and skillreg restores vercel's entries from the registry that publishes their archives
        other = tmp_path / "other"
        other.mkdir()
        (other / "skills-lock.json").write_bytes(rewritten)
        restored = run_in(other, "install", "--frozen", "--registry", server.url)
        assert restored.exit_code == 0, restored.output
        for name in (CSV, ADR):
            # byte for byte (vercel's CLI writes every file 0644; ours keeps a script's executable bit)
            assert installed_files(other / ".agents/skills" / name) == installed_files(clone / ".agents/skills" / name)
            assert tree(other / ".agents/skills" / name) == source_files(site, name)
        assert (other / "skills-lock.json").read_bytes() == rewritten


def run_in(folder: Path, *args: str):  # type: ignore[no-untyped-def]
    import os

    here = Path.cwd()
    os.chdir(folder)
    try:
        return run(*args)
    finally:
        os.chdir(here)


FOREIGN = {
    "from-github": {"source": "octo/skills", "sourceType": "github", "computedHash": "0" * 64,
                    "skillPath": "skills/from-github/SKILL.md"},
    "from-gitlab": {"source": "https://gitlab.com/g/s.git", "sourceUrl": "https://gitlab.com/g/s.git",
                    "ref": "main", "sourceType": "gitlab", "computedHash": "1" * 64},
    "from-git": {"source": "https://git.example/s.git", "sourceUrl": "https://git.example/s.git",
                 "sourceType": "git", "computedHash": "2" * 64},
    "from-local": {"source": "./vendor/from-local", "sourceType": "local", "computedHash": "3" * 64},
    "from-index": {"source": "skills.example", "sourceUrl": "https://skills.example/", "sourceType": "well-known",
                   "computedHash": "4" * 64, "wellKnownDigest": "sha256:" + "5" * 64},
    "from-package": {"source": "some-package", "sourceType": "node_modules", "skillPath": "skills/x/SKILL.md",
                     "version": "1.2.3", "via": "dep", "computedHash": "6" * 64},
}


def test_hand_written_entries_of_every_source_type_are_kept(site: Path, site_v2: Path, project: Path) -> None:
    text = json.dumps({"version": 1, "skills": dict(sorted(FOREIGN.items()))}, indent=2) + "\n"
    (project / "skills-lock.json").write_text(text)
    with RegistryServer(site) as server:
        ok(run("install", CSV, "--registry", server.url))
        server.state.root = site_v2
        ok(run("update", "--registry", server.url))
        restored = run("install", "--registry", server.url)
        ok(restored)
        for name in FOREIGN:
            assert f"{name} (" in restored.stdout and "left alone" in restored.stdout
        listed = run("list").stdout
        assert all(foreign_line(listed, name) for name in FOREIGN)
        ok(run("remove", CSV))
    for name, entry in FOREIGN.items():
        assert pairs(project, name) == list(entry.items())
    lock_of(project)  # valid against the schema
    with pytest.raises(jsonschema.ValidationError):  # and the schema tells an entry of ours that lacks its fields
        jsonschema.validate({"version": 1, "skills": {CSV: {"digest": "sha256:" + "0" * 64}}}, load_schema("lock"))
    # the same file, with the key that lets our clients released before the shared format read it
    assert (project / "skills-lock.json").read_text() == json.dumps(
        {"version": 1, "skills": dict(sorted(FOREIGN.items())), "lock_version": 1}, indent=2) + "\n"


def test_computed_hash_matches_vercels_on_names_of_every_kind(skills_cli: list[str], project: Path,
                                                             tmp_path: Path) -> None:
    names = ["SKILL.md", "scripts/x.py", "Scripts/Y.py", "a-b.md", "a_b.md", "a.b.md", "ab.md", "AB.md", "a1.md",
             "a10.md", "a2.md", "réSumé.md", "resume.md", "Résumé.md", "niño/año.txt", "über.md", "Über.md",
             "ø.md", "o.md", "đ.md", "z.md", "references/Ä-01_x.md", "references/a-01_x.md"]
    skill = tmp_path / "vendor" / "mixed-names"
    for name in names:
        (skill / name).parent.mkdir(parents=True, exist_ok=True)
        (skill / name).write_text(f"{name}\n" if name != "SKILL.md" else
                                  "---\nname: mixed-names\ndescription: File names of every kind.\n---\nBody\n")
    done = skills_run(skills_cli, project, "add", str(skill), "-y", "--agent", "claude-code", "--copy")
    assert done.returncode == 0, done.stdout + done.stderr
    theirs = lock_of(project)["skills"]["mixed-names"]["computedHash"]
    assert folder_hash(skill) == theirs == folder_hash(project / ".claude/skills/mixed-names")
    assert run("verify").exit_code == 0


def test_collation_matches_node_on_thousands_of_names() -> None:
    """The order ``computedHash`` hashes files in, against the pinned Node's ``localeCompare`` itself."""
    if not NODE.exists():
        pytest.skip("tests/foreign is not installed: npm ci --prefix tests/foreign")
    rng = random.Random(2026)
    alphabet = [*" _-.,~$@/09aAbBkKsSzZ", *"éÉèñÑüÜåçøØđĐôÔ"]
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(3000)})
    sort = "let a=JSON.parse(require('fs').readFileSync(0,'utf8'));a.sort((x,y)=>x.localeCompare(y));" \
           "process.stdout.write(JSON.stringify(a))"
    done = subprocess.run([str(NODE), "-e", sort], input=json.dumps(names), capture_output=True, text=True,
                          env={"LANG": "C"}, timeout=60, check=True)
    assert collated(names) == json.loads(done.stdout)
    assert collated(["e\u0301", "\u00e9"]) is None  # equal to ICU: their order is not fixed, so no hash
    assert collated(["straße"]) is None  # outside the exact repertoire


def test_a_lock_of_our_first_format_is_migrated_at_once(site: Path, project: Path) -> None:
    with RegistryServer(site) as server:
        ok(run("install", CSV, "--registry", server.url))
    new = lock_of(project)["skills"][CSV]
    old = {"lock_version": 1, "skills": {CSV: {"name": CSV, **{k: new[k] for k in
                                                                ("digest", "files", "registry", "targets", "version")}}}}
    (project / "skills-lock.json").write_text(json.dumps(old, indent=2, sort_keys=True) + "\n")
    ok(run("list"))
    migrated = lock_of(project)
    assert list(migrated) == ["version", "skills", "lock_version"]  # vercel's reader now sees the skill
    entry = migrated["skills"][CSV]
    assert {k: entry[k] for k in ("digest", "files", "registry", "targets", "version", "computedHash")} == \
        {k: new[k] for k in ("digest", "files", "registry", "targets", "version", "computedHash")}
    assert "wellKnownDigest" not in entry  # known again after the next install from the registry


def test_vercel_update_rewriting_our_entry_makes_it_theirs(site: Path, site_v2: Path, skills_cli: list[str],
                                                           project: Path) -> None:
    with RegistryServer(site) as server:
        ok(run("install", CSV, "--registry", server.url))
        server.state.root = site_v2
        done = skills_run(skills_cli, project, "update", "-y")
        assert done.returncode == 0, done.stdout + done.stderr
        entry = lock_of(project)["skills"][CSV]
        assert "digest" not in entry and entry["wellKnownDigest"] == "sha256:" + json.loads(
            (site_v2 / f"api/v1/skills/{CSV}.json").read_text())["bundles"]["zip"]["sha256"]
        assert foreign_line(run("list").stdout, CSV)
        updated = run("update", "--registry", server.url)
        assert updated.exit_code == 0 and updated.stdout == (
            "Nothing to update: skills-lock.json lists no skills installed by skillreg (the 1 it lists were installed "
            "by another tool: update them with it).\n")
        ok(run("verify"))


def test_a_skill_from_another_registrys_discovery_index_is_restored(site: Path, skills_cli: list[str], project: Path,
                                                                    tmp_path: Path) -> None:
    """A registry that is not ours publishes only a discovery index and its archives: vercel's CLI installs from
    it, and ``skillreg install`` restores that entry from the same index, checked by its digest and hash."""
    other = tmp_path / "other-registry"
    shutil.copytree(site / ".well-known/agent-skills", other / ".well-known/agent-skills")
    shutil.copytree(site / "api/v1/bundles", other / "api/v1/bundles")
    with RegistryServer(other) as server:
        done = skills_add(skills_cli, server.url, project, "--skill", ADR)
        assert done.returncode == 0, done.stdout + done.stderr
        theirs = pairs(project, ADR)
        clone = tmp_path / "clone"
        clone.mkdir()
        shutil.copy(project / "skills-lock.json", clone / "skills-lock.json")
        restored = run_in(clone, "install", "--frozen", "--registry", server.url)
        assert restored.exit_code == 0, restored.output
        assert f"Restored {ADR} into .agents/skills/{ADR}" in restored.stdout
    assert installed_files(clone / ".agents/skills" / ADR) == installed_files(project / ".claude/skills" / ADR)
    assert pairs(clone, ADR) == theirs
    assert run_in(clone, "verify").exit_code == 0


def test_verify_says_so_when_vercels_restore_took_a_newer_version(site: Path, site_v2: Path, skills_cli: list[str],
                                                                  project: Path) -> None:
    """vercel's restore takes the version the registry publishes now, not the locked one: the folder skillreg
    wrote then no longer matches the entry vercel's CLI rewrote, and ``verify`` says which."""
    with RegistryServer(site) as server:
        ok(run("install", CSV, "--registry", server.url))
        server.state.root = site_v2
        done = skills_run(skills_cli, project, "experimental_install")
        assert done.returncode == 0, done.stdout + done.stderr
    assert installed_files(project / ".agents/skills" / CSV) == {
        path: data for path, (data, _) in source_files(site_v2, CSV).items()}
    verified = run("verify")
    assert verified.exit_code == 1
    assert f"ok        {CSV}  .agents/skills/{CSV}" in verified.stdout
    assert f"modified  {CSV}  .claude/skills/{CSV}  (another tool's entry, checked by computedHash: its files do " \
           "not match computedHash)" in verified.stdout
