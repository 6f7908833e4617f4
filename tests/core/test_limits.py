"""The shared limit table: what validation accepts, a registry.yaml may allow, the client installs and MCP serves
are one set of numbers, so a skill that validates under any registry.yaml can be installed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.client import RegistryServer, build_site, commit, run

from builder.cli.app import cli
from builder.client.archive import UnpackLimits
from builder.client.install import MAX_FRONTMATTER_BYTES
from builder.client.mcp_server import served
from builder.core.config import Limits, load_config
from builder.core.errors import ClientError
from builder.core.limits import CLIENT, LIMITS, MCP_MAX_FILES, MCP_MAX_SKILL_BYTES, MIB, ceiling_problems
from builder.core.model import SkillFile

SKILL_MD = """\
---
name: {name}
description: Holds many small reference files. Use when testing the file-count limit.
---
# Many files

Read the file under references/ that names the topic.
"""


def many_files(name: str, count: int) -> dict[str, str | bytes]:
    """A skill of ``count`` files: SKILL.md and ``count - 1`` small references."""
    return {f"skills/{name}/SKILL.md": SKILL_MD.format(name=name),
            **{f"skills/{name}/references/part{i:03}.md": f"Part {i}.\n" for i in range(count - 1)}}


def test_the_ceilings_stay_within_what_every_client_installs_and_mcp_serves() -> None:
    assert ceiling_problems() == []
    assert (LIMITS["max_files"].ceiling, MCP_MAX_FILES, MCP_MAX_SKILL_BYTES) == (512, 512, 16 * MIB)
    assert LIMITS["max_skill_bytes"].default == 10 * MIB
    unpack = UnpackLimits()
    assert (unpack.max_files, unpack.max_file_bytes, unpack.max_total_bytes) == (
        CLIENT.max_entries, CLIENT.max_file_bytes, CLIENT.max_total_bytes) == (2_000, 16 * MIB, 64 * MIB)
    assert CLIENT.max_frontmatter_bytes == MAX_FRONTMATTER_BYTES
    # registry.yaml's limits are the table's, max_files included (history applies the same Limits to old versions)
    assert {f.name: f.default for f in dataclasses.fields(Limits)} == {n: lim.default for n, lim in LIMITS.items()}
    assert Limits().max_files == 512


def test_a_skill_with_one_file_more_than_the_limit_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {"registry.yaml": "title: Files\n", **many_files("crowded", 513)})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["validate"])
    assert (result.exit_code, result.output) == (1, (
        "skills/crowded: error SK518 the skill holds 513 files; the limit is 512\n"
        "    hint: Bundle fewer, larger files (an archive under assets/, say); clients and the MCP Skills extension "
        "take at most 512 files per skill.\n"
        "1 error, 0 warnings in 1 of 1 skill\n"))


def test_a_lower_file_limit_in_registry_yaml_counts_files_left_out_as_too_large(tmp_path: Path) -> None:
    write_tree(tmp_path, {"registry.yaml": "limits:\n  max_files: 3\n  max_file_bytes: 100\n",
                          **many_files("small", 3), "skills/small/assets/big.bin": b"\0" * 101})
    config = load_config(tmp_path / "registry.yaml")
    from builder.validate.run import validate_paths

    found = [(d.code, d.message) for d in validate_paths([tmp_path / "skills"], config).diagnostics]
    assert ("SK518", "the skill holds 4 files; the limit is 3") in found
    assert any(code == "SK507" for code, _ in found)


@pytest.mark.parametrize(("name", "value", "ceiling", "unit"), [
    ("max_files", 513, 512, "files"),
    ("max_files", 2_500, 512, "files"),
    ("max_file_bytes", 16 * MIB + 1, 16 * MIB, "bytes"),
    ("max_skill_bytes", 64 * MIB, 16 * MIB, "bytes"),
    ("max_frontmatter_bytes", 256 * 1024 + 1, 256 * 1024, "bytes"),
])
def test_registry_yaml_cannot_raise_a_limit_past_what_clients_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: int, ceiling: int, unit: str) -> None:
    write_tree(tmp_path, {"registry.yaml": f"title: Big\nlimits:\n  max_tags: 5\n  {name}: {value}\n",
                          **many_files("fine", 2)})
    monkeypatch.chdir(tmp_path)
    for args in (["validate"], ["build", "--out", "site"]):
        result = CliRunner().invoke(cli, ["--config", "registry.yaml", *args])
        assert (result.exit_code, result.output) == (1, (
            f"Error: registry.yaml:4: `limits.{name}` is {value:,}; the most registry.yaml may set is {ceiling:,} "
            f"{unit}, what every skillreg client installs and the MCP Skills extension serves\n")), args
    assert not (tmp_path / "site").exists()


def test_a_skill_at_every_ceiling_validates_builds_and_installs(tmp_path: Path, project: Path) -> None:
    """512 files, with registry.yaml at its ceilings; one file deflates a thousandfold (it is not a zip bomb)."""
    ceilings = "".join(f"  {n}: {lim.ceiling}\n" for n, lim in LIMITS.items() if lim.ceiling is not None)
    registry = write_tree(tmp_path / "registry", {
        "registry.yaml": f"title: At the ceilings\nlimits:\n{ceilings}", **many_files("crowded", 511),
        "skills/crowded/assets/blank.txt": "a" * (4 * MIB)})
    commit(registry, "a skill at every ceiling")
    validated = CliRunner().invoke(cli, ["--config", str(registry / "registry.yaml"), "validate", "--strict"])
    assert (validated.exit_code, validated.output) == (0, "The skill is valid.\n")
    site = build_site(registry, tmp_path / "site")
    with RegistryServer(site) as server:
        result = run("install", "crowded", "--registry", server.url)
    assert result.exit_code == 0, result.output
    installed = project / ".claude/skills/crowded"
    files = sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file())
    assert len(files) == 512 and "assets/blank.txt" in files
    assert (installed / "assets/blank.txt").stat().st_size == 4 * MIB


@pytest.mark.parametrize(("count", "size"), [(513, 1), (2, 8 * MIB + 1)])
def test_mcp_reports_a_skill_past_its_limits_as_too_large_to_serve(count: int, size: int) -> None:
    files = [SkillFile(f"f{i}.md", b"x" * size) for i in range(count)]
    with pytest.raises(ClientError) as raised:
        served("big", files)
    assert str(raised.value) == (
        f"big is too large to serve over MCP: it has {count:,} files and {count * size:,} bytes, and MCP serves at "
        f"most 512 files and 16 MiB per skill; install it with install_skill instead")


def test_mcp_serves_a_skill_at_its_limits() -> None:
    served("fits", [SkillFile(f"f{i}.md", b"x" * (MCP_MAX_SKILL_BYTES // 512)) for i in range(512)])
