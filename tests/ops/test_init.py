"""`skillreg init` on real git repositories made in tmp_path: what it writes, what it reads from the README and
the `origin` remote, and what it never does (overwrite a file, change a tracked one, ask when nobody can answer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import REPO, write_tree
from helpers.changes import adoptable as committed
from helpers.changes import git

from builder.cli.app import cli
from builder.core.config import load_config
from builder.ops.origin import parse_origin
from builder.ops.readme import title_and_description
from builder.ops.workflows import PAGES_WORKFLOW, PROJECT_REPOSITORY, UNPINNED, VALIDATE_WORKFLOW
from builder.validate.baseline import BASELINE_NAME

VENV_BIN = Path(sys.executable).parent
README = "# Team skills\n\n[![ci](https://x.invalid/b.svg)](https://x.invalid)\n\nThe skills our agents use every day, kept in one place.\n"


def skill(name: str, extra: str = "") -> str:
    return (f"---\nname: {name}\ndescription: Does {name} things. Use when asked about {name}.\n{extra}---\n"
            f"# {name}\n\nRun the steps.\n")


def adoptable(root: Path, files: dict[str, str] | None = None, origin: str | None = None) -> Path:
    """A git repository of skills, committed on main, with `origin` when given."""
    return committed(root, files if files is not None else {
        "README.md": README, ".gitignore": "*.pyc\n",
        "skills/pdf/SKILL.md": skill("pdf"), "skills/csv/SKILL.md": skill("csv"),
        "skills/csv/references/example/SKILL.md": skill("example"),  # a file of csv, not a skill
    }, origin)


def init(repo: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(cli, ["init", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def tracked_and_untracked(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all")


def installed_commit() -> str:
    return git(REPO, "rev-parse", "HEAD").strip()


# --- what the remote and the README say ----------------------------------------------------------------------

@pytest.mark.parametrize(("url", "repository", "base_url"), [
    ("https://github.com/acme/skills.git", "https://github.com/acme/skills", "https://acme.github.io/skills/"),
    ("https://github.com/Acme/Team.Skills", "https://github.com/Acme/Team.Skills", "https://acme.github.io/Team.Skills/"),
    ("git@github.com:acme/skills.git", "https://github.com/acme/skills", "https://acme.github.io/skills/"),
    ("ssh://git@github.com/acme/skills.git", "https://github.com/acme/skills", "https://acme.github.io/skills/"),
    ("https://x-access-token:ghp_secret@github.com/acme/skills.git", "https://github.com/acme/skills",
     "https://acme.github.io/skills/"),
    ("https://github.com/acme/acme.github.io.git", "https://github.com/acme/acme.github.io", "https://acme.github.io/"),
    ("https://gitlab.example.com/team/skills.git", "https://gitlab.example.com/team/skills", ""),
    ("https://bob:hunter2@git.example.com:8443/skills", "https://git.example.com:8443/skills", ""),
    ("/srv/git/skills.git", "", ""),
    ("git@gitlab.com:team/skills.git", "", ""),
])
def test_origin_gives_the_repository_and_the_pages_address(url: str, repository: str, base_url: str) -> None:
    origin = parse_origin(url)
    assert (origin.repository, origin.base_url) == (repository, base_url)
    assert "secret" not in origin.url and "hunter2" not in origin.url


@pytest.mark.parametrize(("readme", "title", "description"), [
    (README, "Team skills", "The skills our agents use every day, kept in one place."),
    ("> **Note:** an aside about something else entirely, for the curious.\n\n# Skills\n"
     "Folders of instructions that Claude loads *on demand* for `special` tasks.\n",
     "Skills", "Folders of instructions that Claude loads on demand for special tasks."),
    ('<h1 align="center">Awesome &amp; <b>Useful</b></h1>\n\n<p><img src="x.png"></p>\n\n'
     "A curated list of skills for coding agents of every kind.\n", "Awesome & Useful",
     "A curated list of skills for coding agents of every kind."),
    ("# Marketplace\n\n> Production-ready building blocks for agents, from a single Markdown source.\n\n"
     "Pick your harness:\n", "Marketplace", "Production-ready building blocks for agents, from a single Markdown source."),
    ("Title\n=====\n\n- [a](a.md)\n- [b](b.md)\n\nSee [the docs](d.md).\n", "Title", ""),
    ("", "", ""),
])
def test_readme_gives_the_title_and_the_first_paragraph_of_prose(readme: str, title: str, description: str) -> None:
    assert title_and_description(readme) == (title, description)


def test_a_long_first_paragraph_is_cut_at_a_word() -> None:
    _, description = title_and_description("# T\n\n" + "word " * 200 + "\n")
    assert len(description) <= 300 and description.endswith("word…")


# --- what init writes ----------------------------------------------------------------------------------------

def test_init_writes_a_commented_registry_yaml_and_two_pinned_workflows(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team", origin="git@github.com:acme/team-skills.git")
    code, out, err = init(repo, monkeypatch=monkeypatch)
    assert (code, err) == (0, "")
    config = yaml.safe_load((repo / "registry.yaml").read_text())
    assert {k: config[k] for k in ("title", "description", "base_url", "repository", "skills", "profile")} == {
        "title": "Team skills", "description": "The skills our agents use every day, kept in one place.",
        "base_url": "https://acme.github.io/team-skills/", "repository": "https://github.com/acme/team-skills",
        "skills": ["skills"], "profile": "agents"}
    text = (repo / "registry.yaml").read_text()
    assert "# The website's title and the line under it (from README.md).\ntitle: Team skills\n" in text
    commit = installed_commit()
    for path in (VALIDATE_WORKFLOW, PAGES_WORKFLOW):
        flow = (repo / path).read_text()
        assert f"uses: {PROJECT_REPOSITORY}@{commit} # skillreg " in flow
    assert 'branches: ["main"]' in (repo / PAGES_WORKFLOW).read_text()
    assert out.splitlines()[:3] == [
        "Found 2 skills in 1 folder:",
        "  skills/<skill>: 2 skills in 1 folder",
        "Wrote registry.yaml: title 'Team skills', base_url https://acme.github.io/team-skills/, profile agents, "
        "skills: skills",
    ]
    assert out.splitlines()[3:6] == [
        f"Wrote {VALIDATE_WORKFLOW} and {PAGES_WORKFLOW}, calling {PROJECT_REPOSITORY}@{commit}",
        f"Wrote {BASELINE_NAME}: no known findings; new and changed skills must meet the standard",
        "Appended /site/ to .gitignore",
    ]
    assert json.loads((repo / BASELINE_NAME).read_text()) == {"findings": [], "version": 1}
    assert out.splitlines()[-4:] == [
        "Next:",
        "  skillreg build      # the website and API into site/; `skillreg serve` shows them",
        f"  git add registry.yaml .github/workflows {BASELINE_NAME} .gitignore && git commit -m "
        '"Publish the skills as a registry"',
        "  on GitHub: Settings > Pages > Source: GitHub Actions, then push main",
    ]


def test_init_offers_history_start_commented_out_and_uncommented_it_loads(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team")
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    text = (repo / "registry.yaml").read_text()
    block = '# history:\n#   start: "<commit>"\n'
    assert text.endswith(block) and "history" not in yaml.safe_load(text)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()
    (repo / "registry.yaml").write_text(text.replace(block, block.replace("# ", "").replace("<commit>", head)))
    assert load_config(repo / "registry.yaml").history.start == head


def test_without_origin_the_addresses_are_empty_placeholders_that_say_so(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team")
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    text = (repo / "registry.yaml").read_text()
    config = yaml.safe_load(text)
    assert (config["base_url"], config["repository"]) == ("", "")
    assert "# Where the site and API are served: set it to the public address (https://.../) once you know it." in text
    assert "there was no `origin` remote to read it from." in text


def test_the_title_falls_back_to_the_repository_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "x", {"skills/pdf/SKILL.md": skill("pdf")}, origin="https://github.com/acme/pdf-kit")
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    config = yaml.safe_load((repo / "registry.yaml").read_text())
    assert (config["title"], config["description"]) == ("pdf-kit", "Agent Skills from acme/pdf-kit.")
    assert "(from the repository's name)" in (repo / "registry.yaml").read_text()


def test_plugin_layout_is_named_and_listed_as_one_pattern(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "plugins", {
        "plugins/docs/.claude-plugin/plugin.json": '{"name": "docs"}\n',
        "plugins/docs/skills/pdf/SKILL.md": skill("pdf"), "plugins/docs/skills/docx/SKILL.md": skill("docx"),
        "plugins/data/skills/csv/SKILL.md": skill("csv"),
        "plugins/data/commands/run.md": "# run\n",
    })
    code, out, _ = init(repo, monkeypatch=monkeypatch)
    assert code == 0
    assert out.splitlines()[:2] == ["Found 3 skills in 2 folders:",
                                    "  plugins (plugins/<plugin>/skills/<skill>): 3 skills in 2 folders"]
    assert yaml.safe_load((repo / "registry.yaml").read_text())["skills"] == ["plugins/*/skills"]


def test_an_unknown_install_source_leaves_the_workflows_unpinned_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("builder.ops.init.installed_commit", lambda: None)
    repo = adoptable(tmp_path / "team")
    code, _, err = init(repo, monkeypatch=monkeypatch)
    assert code == 0
    flow = (repo / VALIDATE_WORKFLOW).read_text()
    assert f"uses: {PROJECT_REPOSITORY}@{UNPINNED} # set a commit: see the top" in flow
    assert flow.startswith("# Written by `skillreg init`.")
    assert f"# NOT PINNED YET: replace {UNPINNED} below with a full commit id of {PROJECT_REPOSITORY}" in flow
    assert err == ("Warning: the workflows are not pinned: replace SET-TO-A-COMMIT-OF-skill-registry in them with a "
                   "commit of skill-registry, or run init again with --force --action-ref COMMIT\n")


def test_action_ref_must_be_a_full_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team")
    code, _, err = init(repo, "--action-ref", "main", monkeypatch=monkeypatch)
    assert (code, err) == (2, "Error: --action-ref 'main' is not a full commit id (40 hex digits); the workflows pin "
                              "skill-registry's action to a commit\n")
    assert not (repo / "registry.yaml").exists()
    code, _, _ = init(repo, "--action-ref", "a" * 40, monkeypatch=monkeypatch)
    assert code == 0
    assert f"uses: {PROJECT_REPOSITORY}@{'a' * 40} # skillreg" in (repo / PAGES_WORKFLOW).read_text()


# --- what init never does ------------------------------------------------------------------------------------

@pytest.mark.parametrize("existing", ["registry.yaml", VALIDATE_WORKFLOW])
def test_an_existing_file_stops_init_before_anything_is_written(existing: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team")
    write_tree(repo, {existing: "mine\n"})
    before = tracked_and_untracked(repo)
    code, out, err = init(repo, monkeypatch=monkeypatch)
    assert (code, out) == (2, "")
    assert err == f"Error: {existing} already exists in {repo}; nothing was written (pass --force to replace)\n"
    assert tracked_and_untracked(repo) == before
    assert (repo / existing).read_text() == "mine\n"
    assert (repo / ".gitignore").read_text() == "*.pyc\n"


def test_force_replaces_what_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team")
    write_tree(repo, {"registry.yaml": "title: Old\n", PAGES_WORKFLOW: "old\n"})
    code, out, _ = init(repo, "--force", monkeypatch=monkeypatch)
    assert code == 0
    assert f"Replaced (--force): registry.yaml, {PAGES_WORKFLOW}" in out
    assert yaml.safe_load((repo / "registry.yaml").read_text())["title"] == "Team skills"


def test_a_second_run_names_every_file_in_the_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team")
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    code, _, err = init(repo, monkeypatch=monkeypatch)
    assert code == 2
    assert err.startswith(f"Error: registry.yaml, {VALIDATE_WORKFLOW}, {PAGES_WORKFLOW} and {BASELINE_NAME}")
    assert err.endswith(f" already exist in {repo}; nothing was written (pass --force to replace)\n")
    assert (repo / ".gitignore").read_text().count("/site/") == 1


def test_init_changes_no_tracked_file_but_appends_to_gitignore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team", origin="https://github.com/acme/team")
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    status = sorted(tracked_and_untracked(repo).splitlines())
    assert status == [" M .gitignore", f"?? {PAGES_WORKFLOW}", f"?? {VALIDATE_WORKFLOW}", f"?? {BASELINE_NAME}",
                      "?? registry.yaml"]
    assert (repo / ".gitignore").read_text() == "*.pyc\n# The registry's build output (skillreg build)\n/site/\n"


def test_a_gitignore_that_ignores_the_output_already_is_left_alone(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team", {"skills/pdf/SKILL.md": skill("pdf"), ".gitignore": "site\n"})
    code, out, _ = init(repo, monkeypatch=monkeypatch)
    assert code == 0 and "gitignore" not in out.split("Next:")[0]
    assert (repo / ".gitignore").read_text() == "site\n"


def test_a_missing_gitignore_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team", {"skills/pdf/SKILL.md": skill("pdf")})
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    assert (repo / ".gitignore").read_text() == "# The registry's build output (skillreg build)\n/site/\n"


def test_outside_a_git_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path / "plain", {"skills/pdf/SKILL.md": skill("pdf")})
    code, out, err = init(tmp_path / "plain", monkeypatch=monkeypatch)
    assert (code, out) == (2, "")
    assert err == (f"Error: {tmp_path / 'plain'} is not in a git repository; `skillreg init` adopts a git repository "
                   "of skills (run `git init` first, or run it in your repository's checkout)\n")
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == ["skills"]


def test_a_repository_without_skills_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "empty", {"README.md": README, "docs/guide.md": "# Guide\n"})
    code, out, err = init(repo, monkeypatch=monkeypatch)
    assert (code, out) == (2, "")
    assert err.startswith(f"Error: no skill found in {repo}: a skill is a folder holding SKILL.md; looked in ")
    assert not (repo / "registry.yaml").exists() and not (repo / ".github").exists()


# --- asking --------------------------------------------------------------------------------------------------

def run_init(repo: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([VENV_BIN / "skillreg", "init"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=120, **kwargs)  # type: ignore[call-overload]


def test_with_standard_input_not_a_terminal_init_asks_nothing(tmp_path: Path) -> None:
    repo = adoptable(tmp_path / "team")
    done = run_init(repo, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "Title" not in done.stdout and done.stdout.startswith("Found 2 skills in 1 folder:\n")


def test_on_a_terminal_init_offers_what_it_found_as_answers(tmp_path: Path) -> None:
    import pty

    repo = adoptable(tmp_path / "team")
    leader, follower = pty.openpty()
    os.write(leader, b"Our Skills\n\n\n")  # a new title, then the description and address as offered
    try:
        done = run_init(repo, stdin=follower)
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 0, done.stderr
    assert "Title [Team skills]: " in done.stdout
    config = yaml.safe_load((repo / "registry.yaml").read_text())
    assert (config["title"], config["description"], config["base_url"]) == (
        "Our Skills", "The skills our agents use every day, kept in one place.", "")


@pytest.mark.parametrize(("files", "locations", "kinds"), [
    ({".claude/skills/a/SKILL.md": skill("a"), ".claude/skills/docs/pdf/SKILL.md": skill("pdf")},
     [".claude/skills"], ["an agent's folder (.claude/skills/<skill>): 1 skill in 1 folder",
                          "groups in an agent's folder (.claude/skills/<group>/<skill>): 1 skill in 1 folder"]),
    ({"skills/.curated/a/SKILL.md": skill("a"), "skills/.system/b/SKILL.md": skill("b")},
     ["skills"], ["dot folders in skills/ (skills/.<group>/<skill>): 2 skills in 2 folders"]),
    ({"data/skills/a/SKILL.md": skill("a"), "writing/skills/b/SKILL.md": skill("b"), "top/SKILL.md": skill("top")},
     ["data/skills", "top", "writing/skills"],
     ["category folders (<category>/skills/<skill>): 2 skills in 2 folders",
      "skill folders at the top (<skill>/): 1 skill in 1 folder"]),
])
def test_layouts_are_named_and_listed_shortest(files: dict[str, str], locations: list[str], kinds: list[str],
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "repo", files)
    code, out, _ = init(repo, monkeypatch=monkeypatch)
    assert code == 0
    assert out.splitlines()[1:1 + len(kinds)] == [f"  {kind}" for kind in kinds]
    assert yaml.safe_load((repo / "registry.yaml").read_text())["skills"] == locations


# --- then build, and the ratchet -----------------------------------------------------------------------------

AS_PEOPLE_WRITE_THEM = {
    "README.md": README,
    "skills/pdf/SKILL.md": skill("pdf", "argument-hint: '[file]'\nallowed-tools: [Read, Bash]\n"),  # Claude Code's
    "skills/csv/SKILL.md": skill("csv", "metadata:\n  tags: [data, tables]\n  updated: 2025-04-01\n"),
    "skills/notes/SKILL.md": skill("notes").replace("name: notes", "name: note-taker"),  # not its folder's name
    "skills/plain/SKILL.md": skill("plain"),
}


def run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_build_publishes_every_skill_after_init_with_no_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team", AS_PEOPLE_WRITE_THEM, origin="https://github.com/acme/team")
    code, out, _ = init(repo, monkeypatch=monkeypatch)
    assert code == 0
    held = json.loads((repo / BASELINE_NAME).read_text())["findings"]
    assert {(f["skill"], f["rule"]) for f in held} >= {("skills/csv", "SK013"), ("skills/csv", "SK113"),
                                                       ("skills/notes", "SK106")}
    assert f"Wrote {BASELINE_NAME}: {sum(f['count'] for f in held)} known findings in 3 skills, shown" in out
    code, out = run(["build", "--no-site"])
    assert code == 0, out
    index = json.loads((repo / "site/api/v1/index.json").read_text())
    assert sorted(s["name"] for s in index["skills"]) == ["csv", "note-taker", "pdf", "plain"]
    assert index["registry"]["url"] == "https://acme.github.io/team/"
    assert run(["validate"])[0] == 0


def test_without_origin_build_works_with_the_placeholders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team")
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    code, out = run(["build", "--no-site"])
    assert code == 0, out
    index = json.loads((repo / "site/api/v1/index.json").read_text())
    assert (index["registry"]["url"], index["source"]["repository"]) == ("", None)
    detail = json.loads((repo / "site/api/v1/skills/pdf.json").read_text())
    assert detail["bundles"]["zip"]["url"].startswith("api/v1/bundles/pdf/")  # relative, for local use


def test_after_init_a_new_skill_must_meet_the_standard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team", AS_PEOPLE_WRITE_THEM)
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    write_tree(repo, {"skills/New_Bad_Skill/SKILL.md": skill("New_Bad_Skill", "colour: red\n")})
    code, out = run(["validate"])
    assert code == 1
    errors = [line for line in out.splitlines() if ": error " in line]
    assert errors and all(line.startswith("skills/New_Bad_Skill/SKILL.md:") for line in errors), out
    assert any(" SK120 " in line for line in errors), errors


def test_skillreg_baseline_in_an_adopted_repository_reads_every_skill_found(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "plugins", {
        "plugins/docs/skills/pdf/SKILL.md": skill("pdf", "metadata:\n  tags: [a, b]\n"),
        "plugins/data/skills/csv/SKILL.md": skill("csv", "metadata:\n  tags: [c, d]\n"),
    })
    assert init(repo, monkeypatch=monkeypatch)[0] == 0
    written = (repo / BASELINE_NAME).read_bytes()
    assert {f["skill"] for f in json.loads(written)["findings"]} == {"plugins/data/skills/csv",
                                                                      "plugins/docs/skills/pdf"}
    code, out = run(["baseline"])
    assert code == 0 and " in 2 skills of 2 " in out, out
    assert (repo / BASELINE_NAME).read_bytes() == written  # the command writes what init wrote


def test_init_names_the_safety_errors_no_baseline_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = adoptable(tmp_path / "team", {"skills/pdf/SKILL.md": skill("pdf"), "skills/csv/SKILL.md": skill("csv")})
    (repo / "skills/pdf/REFERENCE.md").symlink_to("../csv/SKILL.md")
    code, out, _ = init(repo, monkeypatch=monkeypatch)
    assert code == 0
    assert ("Not held: errors of safety rules, which no baseline holds (SK501 in 1 skill); `skillreg build` stops "
            "on them until they are fixed (--keep-going leaves those skills out)") in out.splitlines()
    assert "SK501" not in (repo / BASELINE_NAME).read_text()
