"""The baseline of known findings: written from today's findings, it lets `validate` pass on them and fail on
every new finding of the open standard, reports what is fixed, prunes it, never holds a safety finding, and the
pull-request check refuses a baseline that grew. Real git repositories in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result
from helpers import write_tree
from helpers.changes import git

from builder.cli.app import cli
from builder.core.errors import ConfigError
from builder.publish.schemas import load_schema
from builder.validate.baseline import BASELINE_NAME, Baseline

AGENTS = "title: Adopted\nprofile: agents\n"
# What a repository adopted as it is holds: Claude Code's fields, flow-style lists, metadata that is not text,
# a name that is not its folder's, a field nobody defines.
LISTS = ("---\nname: lists\ndescription: Lists things when asked.\nallowed-tools: [Read, Grep]\n"
         "metadata:\n  tags: [a, b]\n  created: 2024-05-01\n---\nList the things.\n")
CLAUDE = ("---\nname: Claude_Skill\ndescription: Runs for Claude Code when asked.\nargument-hint: \"[file]\"\n"
          "model: haiku\ndisable-model-invocation: true\nrequires: git\n---\nRun it.\n")
NEW_BAD = "---\nname: New_Bad_Skill\ndescription: Does a new thing when asked.\nhomepage: x\n---\nDo it.\n"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def adopted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_tree(tmp_path / "repo", {"registry.yaml": AGENTS, "skills/lists/SKILL.md": LISTS,
                                          "skills/claude/SKILL.md": CLAUDE})
    monkeypatch.chdir(root)
    return root


def entries(root: Path) -> list[dict[str, object]]:
    return json.loads((root / BASELINE_NAME).read_text(encoding="utf-8"))["findings"]


def test_the_baseline_holds_todays_findings_sorted_one_a_line_and_the_same_bytes_each_time(adopted: Path) -> None:
    written = run("baseline")
    assert (written.exit_code, written.output) == (0, f"Wrote {BASELINE_NAME}: 8 known findings in 2 skills of 2 "
                                                      f"(8 added, 0 removed)\n")
    data = (adopted / BASELINE_NAME).read_bytes()
    assert data.decode().splitlines() == [
        "{",
        '  "findings": [',
        '    {"count": 1, "file": "SKILL.md", "rule": "SK104", "skill": "skills/claude"},',
        '    {"count": 1, "file": "SKILL.md", "rule": "SK106", "skill": "skills/claude"},',
        '    {"count": 1, "file": "SKILL.md", "rule": "SK120", "skill": "skills/claude"},',
        '    {"count": 2, "file": "SKILL.md", "rule": "SK013", "skill": "skills/lists"},',
        '    {"count": 2, "file": "SKILL.md", "rule": "SK113", "skill": "skills/lists"},',
        '    {"count": 1, "file": "SKILL.md", "rule": "SK115", "skill": "skills/lists"}',
        "  ],",
        '  "version": 1',
        "}",
    ]
    assert run("baseline").output.endswith("(0 added, 0 removed)\n") and (adopted / BASELINE_NAME).read_bytes() == data
    assert Baseline.parse(data, BASELINE_NAME).to_bytes() == data


def test_under_the_baseline_known_findings_pass_and_a_new_bad_skill_fails(adopted: Path) -> None:
    assert run("validate").exit_code == 0  # under `agents` the departures are warnings
    run("baseline")
    clean = run("validate")
    assert (clean.exit_code, clean.output) == (0, "All 2 skills are valid (8 known findings in the baseline).\n")
    verbose = run("validate", "--verbose")
    assert verbose.output.count("(in the baseline)") == 8 and verbose.exit_code == 0
    write_tree(adopted, {"skills/New_Bad_Skill/SKILL.md": NEW_BAD})
    failed = run("validate")
    assert failed.exit_code == 1
    assert failed.output.splitlines() == [
        "skills/New_Bad_Skill/SKILL.md:2: error SK104 `name` 'New_Bad_Skill' has characters outside a-z, 0-9 and "
        "'-': 'B' 'N' 'S' '_' (not in the baseline: a new or changed skill must meet the open standard)",
        "    hint: Did you mean `new-bad-skill`?",
        "skills/New_Bad_Skill/SKILL.md:4: error SK120 unknown field `homepage` (not in the baseline: a new or "
        "changed skill must meet the open standard)",
        "    hint: Put registry data under `metadata`.",
        "2 errors, 0 warnings in 1 of 3 skills; 8 known findings in the baseline",
    ]
    document = json.loads(run("validate", "--format", "json").output)
    jsonschema.validate(document, load_schema("validate"))
    assert (document["summary"]["baselined"], sum(d["baselined"] for d in document["diagnostics"])) == (8, 8)


def test_a_changed_skill_beyond_its_counts_fails_and_a_fixed_finding_is_stale_until_pruned(adopted: Path) -> None:
    run("baseline")
    md = adopted / "skills/lists/SKILL.md"
    md.write_text(LISTS.replace("  created: 2024-05-01\n", "  created: 2024-05-01\n  size: 3\n"), encoding="utf-8")
    more = run("validate")
    assert more.exit_code == 1 and "error SK113 `metadata.created` must be a string" in more.output
    assert "(3 in this file now, 2 in the baseline: a new or changed skill must meet the open standard)" in more.output
    md.write_text(LISTS.replace("allowed-tools: [Read, Grep]\n", "allowed-tools: Read Grep\n"), encoding="utf-8")
    stale = run("validate")
    assert stale.exit_code == 0
    assert stale.output.splitlines()[:3] == [
        f"{BASELINE_NAME}:6: warning SK606 stale baseline entry: 2 SK013 in skills/lists/SKILL.md in the baseline, "
        "1 now",
        "    hint: Run `skillreg baseline --prune` and commit the smaller baseline.",
        f"{BASELINE_NAME}:8: warning SK606 stale baseline entry: 1 SK115 in skills/lists/SKILL.md in the "
        "baseline, 0 now",
    ]
    assert run("validate", "--strict").exit_code == 1
    write_tree(adopted, {"skills/New_Bad_Skill/SKILL.md": NEW_BAD})  # pruning never adds what is new
    pruned = run("baseline", "--prune")
    assert pruned.output == f"Pruned {BASELINE_NAME}: 6 known findings in 2 skills of 3 (2 fixed findings removed)\n"
    assert {(e["rule"], e["count"]) for e in entries(adopted) if e["skill"] == "skills/lists"} == \
        {("SK013", 1), ("SK113", 2)}
    assert "SK606" not in run("validate").output


def test_a_removed_skill_leaves_stale_entries(adopted: Path) -> None:
    run("baseline")
    (adopted / "skills/claude/SKILL.md").unlink()
    (adopted / "skills/claude").rmdir()
    out = run("validate").output
    assert "stale baseline entry: skills/claude is gone, and the baseline still holds its 1 SK104" in out
    assert "(and 2 more like it in" not in out  # three stale entries: each is shown
    run("baseline", "--prune")
    assert {e["skill"] for e in entries(adopted)} == {"skills/lists"}


def test_safety_findings_are_never_baselined(adopted: Path) -> None:
    long_path = "references/" + "a" * 190 + ".md"
    write_tree(adopted, {f"skills/lists/{long_path}": "x\n", "skills/lists/.DS_Store": b"\0"})
    written = run("baseline")
    assert written.exit_code == 0 and written.output.splitlines()[1] == (
        "Not held: 2 errors of safety rules (SK505 ×1, SK510 ×1), which no baseline holds; `skillreg validate` "
        "fails until they are fixed")
    assert not {e["rule"] for e in entries(adopted)} & {"SK505", "SK510"}
    failed = run("validate")
    assert failed.exit_code == 1 and "error SK505" in failed.output and "error SK510" in failed.output
    # Even written into the baseline by hand, a safety finding is not held.
    held = json.loads((adopted / BASELINE_NAME).read_text())
    held["findings"].append({"count": 1, "file": long_path, "rule": "SK505", "skill": "skills/lists"})
    (adopted / BASELINE_NAME).write_text(json.dumps(held), encoding="utf-8")
    assert run("validate").exit_code == 1


@pytest.mark.parametrize(("text", "message"), [
    ("{", f"{BASELINE_NAME}:1: not valid JSON: Expecting property name enclosed in double quotes"),
    ('{"findings": [], "version": 2}', f"{BASELINE_NAME}: a baseline is "
                                       '{"findings": [...], "version": 1}; write it with `skillreg baseline`'),
    ('{"findings": [{"count": 0, "file": "SKILL.md", "rule": "SK113", "skill": "s"}], "version": 1}',
     f"{BASELINE_NAME}: findings[0]: `count` must be a positive whole number, got 0"),
    ('{"findings": [{"count": 1, "file": "SKILL.md", "rule": "SK999", "skill": "s"}], "version": 1}',
     f"{BASELINE_NAME}: findings[0]: 'SK999' is not a rule code (`skillreg rules` lists them)"),
    ('{"findings": [{"count": 1, "file": "SKILL.md", "rule": "SK113", "skill": "../s"}], "version": 1}',
     f"{BASELINE_NAME}: findings[0]: `skill` must be a relative path inside the registry, got '../s'"),
])
def test_a_broken_baseline_is_one_line_naming_it(adopted: Path, text: str, message: str) -> None:
    (adopted / BASELINE_NAME).write_text(text, encoding="utf-8")
    result = run("validate")
    assert (result.exit_code, result.stderr) == (1, f"Error: {message}\n")
    with pytest.raises(ConfigError):
        Baseline.parse(text.encode(), BASELINE_NAME)


# The pull-request check, in a real repository with a base branch.


@pytest.fixture
def repo(adopted: Path) -> Path:
    assert run("baseline").exit_code == 0
    git(adopted, "init", "-q", "-b", "main")
    git(adopted, "add", "-A")
    git(adopted, "commit", "-q", "-m", "Adopt the repository")
    git(adopted, "checkout", "-q", "-b", "pr")
    return adopted


def commit(repo: Path, message: str = "Change") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def test_a_pull_request_adding_a_bad_skill_fails_the_check(repo: Path) -> None:
    write_tree(repo, {"skills/New_Bad_Skill/SKILL.md": NEW_BAD})
    commit(repo)
    result = run("validate", "--changed-since", "main")
    assert result.exit_code == 1 and "error SK120 unknown field `homepage` (not in the baseline" in result.output


def test_a_pull_request_that_adds_its_findings_to_the_baseline_fails_the_check(repo: Path) -> None:
    write_tree(repo, {"skills/New_Bad_Skill/SKILL.md": NEW_BAD})
    assert run("baseline").exit_code == 0  # the contributor grandfathers the new skill's findings
    commit(repo)
    result = run("validate", "--changed-since", "main", "--format", "github")
    assert result.exit_code == 1
    hint = ("(Fix the new findings instead: a pull request cannot add its own findings to the baseline. Only "
            "`skillreg baseline --prune`, which removes fixed findings, may change it in a pull request.)")
    assert [line for line in result.output.splitlines() if "SK605" in line] == [
        f"::error file={BASELINE_NAME},line={line},title=SK605::the baseline holds 1 {rule} in "
        f"skills/New_Bad_Skill/SKILL.md, 0 on main {hint}" for line, rule in ((3, "SK104"), (4, "SK120"))
    ]


def test_a_pull_request_that_fixes_and_prunes_passes_and_one_that_deletes_the_baseline_fails(repo: Path) -> None:
    md = repo / "skills/lists/SKILL.md"
    md.write_text(LISTS.replace("allowed-tools: [Read, Grep]\n", "allowed-tools: Read Grep\n"), encoding="utf-8")
    commit(repo, "Fix a list")
    assert "SK606" in run("validate", "--changed-since", "main").output  # fixed: prune it
    run("baseline", "--prune")
    commit(repo, "Prune the baseline")
    pruned = run("validate", "--changed-since", "main")
    assert (pruned.exit_code, "SK605" in pruned.output, "SK606" in pruned.output) == (0, False, False)
    (repo / BASELINE_NAME).unlink()
    commit(repo, "Drop the baseline")
    dropped = run("validate", "--changed-since", "main")
    assert dropped.exit_code == 1 and "error SK013" in dropped.output  # the changed skill meets no baseline now


def test_a_registry_without_a_baseline_checks_pull_requests_as_before(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_tree(tmp_path / "repo", {"registry.yaml": AGENTS, "skills/lists/SKILL.md": LISTS})
    monkeypatch.chdir(root)
    git(root, "init", "-q", "-b", "main")
    commit(root, "Base")
    git(root, "checkout", "-q", "-b", "pr")
    write_tree(root, {"skills/new-skill/SKILL.md": NEW_BAD.replace("New_Bad_Skill", "new-skill")})
    commit(root)
    result = run("validate", "--changed-since", "main")
    assert result.exit_code == 0 and "warning SK120 unknown field `homepage`" in result.output
