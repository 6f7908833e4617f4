"""Tests for skills/commit-message-lint/scripts/lint_commit_msg.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import git_env, run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "commit-message-lint" / "scripts" / "lint_commit_msg.py"


def run(*args: str, stdin: str | None = "", env: dict | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, env=env, stdin=stdin)


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "--range" in result.stdout


def test_good_message_with_comments_and_scissors_passes(tmp_path):
    msg = tmp_path / "COMMIT_EDITMSG"
    msg.write_text("fix(parser): handle empty input\n\nThe parser crashed on empty files.\n\n"
                   "BREAKING CHANGE: empty input now returns None\n"
                   "# Please enter the commit message\n"
                   "# ------------------------ >8 ------------------------\n"
                   "Not.a valid header at all\n", encoding="utf-8")
    result = run(str(msg))
    assert result.returncode == 0, result.stdout
    assert result.stdout == "1 message(s) checked: 0 error(s), 0 warning(s)\n"


def test_bad_message_reports_every_rule():
    result = run(stdin="Feat(API): Added pagination support to every list endpoint in the public API.\n"
                       "Body starts here\n")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "stdin:1: error: [header-max-length] header is 77 characters; keep it to 72",
        "stdin:1: error: [type-case] type 'Feat' must be lower case",
        "stdin:1: error: [scope-case] scope 'API' must be a non-empty lower-case word (use '-' between words)",
        "stdin:1: error: [subject-full-stop] subject must not end with a full stop",
        "stdin:1: warning: [subject-case] start the subject in lower case ('added')",
        "stdin:1: warning: [subject-imperative] use the imperative mood ('add', 'fix'), not 'Added'",
        "stdin:2: error: [body-leading-blank] leave a blank line between the header and the body",
        "1 message(s) checked: 5 error(s), 2 warning(s)",
    ]


def test_warnings_only_fail_with_strict_and_ignore_works():
    message = "feat: adds csv export\n"
    assert run(stdin=message).returncode == 0
    assert run("--strict", stdin=message).returncode == 1
    assert run("--strict", "--ignore", "subject-imperative", stdin=message).returncode == 0


def test_types_fixup_and_json():
    result = run("--types", "feat,fix", "--json", stdin="docs: explain setup\n")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["results"][0]["problems"] == [
        {"rule": "type-enum", "severity": "error", "line": 1, "message": "type 'docs' is not one of: feat, fix"}]
    assert run(stdin="fixup! feat: add export\n").returncode == 1
    assert run("--allow-fixup", stdin="fixup! feat: add export\n").returncode == 0
    assert run(stdin="Merge branch 'main' into topic\n").returncode == 0


def test_range_mode_reads_git_history(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = git_env(tmp_path, "T", "t@example.invalid")
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "chore: start"],
                 ["commit", "-q", "--allow-empty", "-m", "WIP"],
                 ["commit", "-q", "--allow-empty", "-m", "feat: add login"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    wip = subprocess.run(["git", "rev-parse", "--short", "HEAD~1"], cwd=repo, env=env, capture_output=True,
                         text=True).stdout.strip()
    result = run("--range", "HEAD~2..HEAD", "-C", str(repo), env=env)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{wip}:1: error: [header-format] header must look like 'type(scope): subject', "
        "e.g. 'fix(parser): handle empty input'",
        "2 message(s) checked: 1 error(s), 0 warning(s)",
    ]
    bad = run("--range", "nope..HEAD", "-C", str(repo), env=env)
    assert bad.returncode == 2
    assert "error: bad revision 'nope..HEAD'" in bad.stderr


def test_unreadable_file_and_unknown_rule_exit_two(tmp_path):
    result = run(str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "error: cannot read" in result.stderr
    result = run("--ignore", "no-such-rule")
    assert result.returncode == 2
    assert "unknown rule(s) for --ignore: no-such-rule" in result.stderr
