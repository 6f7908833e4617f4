"""Tests for skills/todo-collector/scripts/collect_todos.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import git_env as isolated_git_env
from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "todo-collector" / "scripts" / "collect_todos.py"


def git_env(home: Path) -> dict[str, str]:
    return dict(isolated_git_env(home, "Ann Author", "ann@example.invalid"),
                GIT_AUTHOR_DATE="2024-03-04T12:00:00Z", GIT_COMMITTER_DATE="2024-03-04T12:00:00Z")


def make_tree(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "import os  # TODO(ann): drop this import\n"
        "def f():\n"
        "    return 1  # FIXME: off by one when empty\n"
        "# a todo list in prose is not a marker\n"
        "s = 'abc TODO not a comment'\n", encoding="utf-8")
    (root / "src" / "main.c").write_text("/* HACK: work around IE11 */\nint main() { return 0; } // XXX remove\n",
                                         encoding="utf-8")
    (root / "README.md").write_text("<!-- TODO: add screenshots -->\n", encoding="utf-8")
    (root / "node_modules" / "dep" / "index.js").write_text("// FIXME: vendored, must be skipped\n",
                                                            encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\0\0# TODO: binary\n")


def run(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, cwd=cwd, env=env)


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "--blame" in result.stdout


def test_plain_folder_report(tmp_path):
    make_tree(tmp_path / "proj")
    result = run(str(tmp_path / "proj"), env=git_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "FIXME (1)",
        "  src/app.py:3: FIXME: off by one when empty",
        "",
        "HACK (1)",
        "  src/main.c:1: HACK: work around IE11",
        "",
        "XXX (1)",
        "  src/main.c:2: XXX: remove",
        "",
        "TODO (2)",
        "  README.md:1: TODO: add screenshots",
        "  src/app.py:1: TODO(ann): drop this import",
        "",
        "total: 5 (FIXME=1, BUG=0, HACK=1, XXX=1, TODO=2)",
    ]


def test_blame_in_git_repo_and_gitignore(tmp_path):
    proj = tmp_path / "proj"
    make_tree(proj)
    (proj / ".gitignore").write_text("generated/\n", encoding="utf-8")
    (proj / "generated").mkdir()
    (proj / "generated" / "out.py").write_text("# FIXME: ignored by git\n", encoding="utf-8")
    env = git_env(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=proj, env=env, check=True)
    subprocess.run(["git", "add", "src"], cwd=proj, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "add src"], cwd=proj, env=env, check=True)
    result = run("--blame", "--json", cwd=proj, env=env)
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    assert [(i["tag"], i["path"], i["line"], i["author"], i["date"]) for i in items] == [
        ("FIXME", "src/app.py", 3, "Ann Author", "2024-03-04"),
        ("HACK", "src/main.c", 1, "Ann Author", "2024-03-04"),
        ("XXX", "src/main.c", 2, "Ann Author", "2024-03-04"),
        ("TODO", "README.md", 1, "(not committed)", None),
        ("TODO", "src/app.py", 1, "Ann Author", "2024-03-04"),
    ]
    assert items[4]["owner"] == "ann"


def test_custom_tags_and_fail_on(tmp_path):
    make_tree(tmp_path / "proj")
    env = git_env(tmp_path)
    result = run(str(tmp_path / "proj"), "--tags", "TODO,FIXME", "--fail-on", "FIXME", env=env)
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "total: 3 (TODO=2, FIXME=1)"
    assert run(str(tmp_path / "proj"), "--tags", "TODO", "--fail-on", "TODO", env=env).returncode == 1
    assert run(str(tmp_path / "proj"), "--tags", "BUG", "--fail-on", "BUG", env=env).returncode == 0


def test_bad_input_exits_nonzero(tmp_path):
    result = run(str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "error: folder not found" in result.stderr
    result = run(str(tmp_path), "--tags", "TODO", "--fail-on", "FIXME")
    assert result.returncode == 2
    assert "--fail-on markers must also be in --tags: FIXME" in result.stderr
