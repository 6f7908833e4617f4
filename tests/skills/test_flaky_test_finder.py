"""Tests for skills/flaky-test-finder/scripts/find_flaky.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "flaky-test-finder" / "scripts" / "find_flaky.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args)


def report(list_result: str = "", extra: str = "") -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_api" name="test_list">{list_result}</testcase>
<testcase classname="tests.test_api" name="test_get"/>
<testcase classname="tests.test_db" name="test_migrate"><error message="OperationalError: locked"/></testcase>
<testcase classname="tests.test_db" name="test_slow"><skipped/></testcase>{extra}
</testsuite></testsuites>
"""


def write_runs(folder: Path) -> None:
    folder.mkdir()
    (folder / "run1.xml").write_text(report(), encoding="utf-8")
    (folder / "run2.xml").write_text(report('<failure message="AssertionError: expected 3 got 2">x</failure>'),
                                     encoding="utf-8")
    (folder / "run3.xml").write_text(report(), encoding="utf-8")


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "JUnit XML" in result.stdout


def test_detects_flaky_and_always_failing(tmp_path):
    write_runs(tmp_path / "reports")
    result = run(str(tmp_path / "reports"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "reports: 3  tests: 4  flaky: 1  always failing: 1",
        "",
        "flaky (passed and failed):",
        "   33.3% failed (1/3)  tests.test_api::test_list",
        "         first failure: AssertionError: expected 3 got 2",
        "",
        "always failing:",
        "  3 run(s)  tests.test_db::test_migrate  - OperationalError: locked",
    ]
    assert run(str(tmp_path / "reports"), "--fail-on-flaky").returncode == 1


def test_rerun_markers_in_single_report_and_json(tmp_path):
    single = tmp_path / "single.xml"
    single.write_text(report(extra='\n<testcase classname="t" name="test_retry">'
                                   '<rerunFailure message="TimeoutError: 5s"/></testcase>'), encoding="utf-8")
    result = run(str(single), "--json")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert [e["id"] for e in data["flaky"]] == ["t::test_retry"]
    assert data["flaky"][0]["first_failure"] == "TimeoutError: 5s"
    assert data["flaky"][0]["fail_rate"] == 0.5


def test_min_runs_filters_tests_seen_rarely(tmp_path):
    write_runs(tmp_path / "reports")
    result = run(str(tmp_path / "reports"), "--min-runs", "4", "--json")
    data = json.loads(result.stdout)
    assert data["flaky"] == [] and data["always_failing"] == []


def test_bad_inputs_exit_two(tmp_path):
    result = run(str(tmp_path / "missing.xml"))
    assert result.returncode == 2
    assert "error: report not found" in result.stderr
    broken = tmp_path / "broken.xml"
    broken.write_text("<testsuite><testcase name='a'>", encoding="utf-8")
    result = run(str(broken))
    assert result.returncode == 2
    assert "is not well-formed XML" in result.stderr
    other = tmp_path / "page.xml"
    other.write_text("<html/>", encoding="utf-8")
    result = run(str(other))
    assert result.returncode == 2
    assert "is not a JUnit report (root element is <html>)" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run(str(empty))
    assert result.returncode == 2
    assert "no *.xml reports found" in result.stderr
