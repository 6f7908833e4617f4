"""One error handler for every command: each command's failure is one line on stderr with its exit code
(1 failure, 2 usage, 130 Ctrl-C), never a traceback, because the group runs every command inside it."""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.build import skillreg_command

from builder.cli.app import all_commands, cli

BAD_YAML = "Error: bad.yaml:2: invalid YAML: expected the node content, but found '<stream end>'\n"
BAD_LOCK = "Error: {cwd}/skills-lock.json: skill 'x': the entry is not a JSON object\n"
NOT_A_REGISTRY = "Error: ftp://h/: the registry must be an https:// URL, a file:// URL or a folder\n"
NO_REGISTRY = ("Error: no registry.yaml in {{cwd}} or a parent folder, and `skillreg {command}` writes into a "
               "registry; run it in a registry's checkout, pass --config FILE, or make a git repository of skills a "
               "registry with `skillreg init`\n")
NO_DEPLOY = ("Error: file:///nonexistent/api/v1/index.json could not be read ([Errno 2] No such file or directory: "
             "'/nonexistent/api/v1/index.json?commit=abc&attempt=1'), not abc, after 1 attempt in 0s; the deploy "
             "did not reach the live site\n")

# (command line, exit code, the last line of stderr); the registry's commands all read registry.yaml first.
CASES = [(["--config", "bad.yaml", *args], 1, BAD_YAML) for args in (
    ["validate"], ["new", "foo"], ["build"], ["serve"], ["export", "foo"], ["import", "-"], ["prompt"],
    ["marketplace"], ["baseline"], ["trust", "init", "keys"])] + [
    (["new", "foo"], 2, NO_REGISTRY.format(command="new")),
    (["baseline"], 2, NO_REGISTRY.format(command="baseline")),
    (["marketplace"], 2, NO_REGISTRY.format(command="marketplace")),
    (["init"], 2, "Error: {cwd} is not in a git repository; `skillreg init` adopts a git repository of skills (run "
                  "`git init` first, or run it in your repository's checkout)\n"),
    (["check-deploy", "file:///nonexistent", "--commit", "abc", "--timeout", "0"], 1, NO_DEPLOY),
    (["upload", "s3://bkt/reg", "--out", "none"], 2, "Error: none: no such folder; run `skillreg build --out none` first\n"),
    (["search", "x", "--registry", "ftp://h/"], 2, NOT_A_REGISTRY),
    (["info", "x", "--registry", "none"], 1, BAD_LOCK),  # the roots the lock pins bind a read too
    (["mcp", "--registry", "ftp://h/"], 2, NOT_A_REGISTRY),
    (["install", "x", "--registry", "none"], 1, BAD_LOCK),
    (["update"], 1, BAD_LOCK),
    (["remove", "x"], 1, BAD_LOCK),
    (["list"], 1, BAD_LOCK),
    (["verify"], 1, BAD_LOCK),
]
# `rules` reads nothing and has no failure but a usage error, which Click reports.
NO_FAILURE = {"rules"}


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bad.yaml").write_text("title: [\n", encoding="utf-8")
    (tmp_path / "skills-lock.json").write_text('{"version": 1, "skills": {"x": 3}}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_command_has_a_failure_case() -> None:
    named = {next(a for a in args if not a.startswith("-") and a != "bad.yaml") for args, _, _ in CASES}
    assert named | NO_FAILURE == set(all_commands())


@pytest.mark.parametrize(("args", "code", "last"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_failing_command_prints_one_line_and_its_exit_code(broken: Path, args: list[str], code: int,
                                                              last: str) -> None:
    result = CliRunner().invoke(cli, args, input="")
    assert isinstance(result.exception, SystemExit) and result.exit_code == code
    assert result.stderr.splitlines(keepends=True)[-1] == last.format(cwd=broken)
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [["--config", "registry.yaml", "validate"], ["list"]])
def test_a_disk_error_and_ctrl_c_go_through_the_same_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "registry.yaml").write_text("title: T\n", encoding="utf-8")

    def disk_full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x"))

    target = "builder.validate.run.ValidationRun" if "validate" in args else "builder.client.lock.read_lock"
    monkeypatch.setattr(target, disk_full)
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.stderr) == (1, f"Error: {tmp_path}/x: the disk is full; free some space and "
                                                    "run the command again\n")

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(target, interrupted)
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.stderr) == (130, "Interrupted.\n")


def test_the_installed_command_exits_through_the_handler(broken: Path) -> None:
    done = subprocess.run([*skillreg_command(), "--config", "bad.yaml", "build"], cwd=broken, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", BAD_YAML)
