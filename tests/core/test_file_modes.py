"""Files the CLI writes get the usual modes as the user's umask allows, not mkstemp's 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.build import make_registry

from builder.cli.app import cli
from builder.core.fs import write_atomic


@pytest.fixture(params=[0o022, 0o027, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("fmt", ["prompts-chat", "zip", "json"])
def test_export_writes_a_file_readable_as_the_umask_allows(tmp_path: Path, umask: int, fmt: str) -> None:
    registry = make_registry(tmp_path / "repo", ["csv-profiler"], commit=False)
    target = tmp_path / "exported" / "csv-profiler.out"
    result = CliRunner().invoke(cli, ["--config", str(registry / "registry.yaml"), "export", "csv-profiler",
                                      "--format", fmt, "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert mode(target) == 0o644 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["csv-profiler.out"]  # no temporary file left


def test_marketplace_writes_a_file_readable_as_the_umask_allows(tmp_path: Path, umask: int) -> None:
    registry = make_registry(tmp_path / "repo", ["csv-profiler"], commit=False)
    result = CliRunner().invoke(cli, ["--config", str(registry / "registry.yaml"), "marketplace"])
    assert result.exit_code == 0, result.output
    assert mode(registry / ".claude-plugin" / "marketplace.json") == 0o644 & ~umask


def test_replacing_a_file_gives_the_usual_mode_and_executables_0755(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "script.sh"
    target.write_bytes(b"old")
    target.chmod(0o600)
    write_atomic(target, b"#!/bin/sh\n", executable=True)
    assert (target.read_bytes(), mode(target)) == (b"#!/bin/sh\n", 0o755 & ~umask)
    write_atomic(target, b"plain\n")
    assert (target.read_bytes(), mode(target)) == (b"plain\n", 0o644 & ~umask)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script.sh"]


def test_write_atomic_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    target = tmp_path / "data.json"
    target.symlink_to(outside)
    write_atomic(target, b"{}\n")
    assert not target.is_symlink() and target.read_bytes() == b"{}\n"
    assert outside.read_text() == "keep me\n"
