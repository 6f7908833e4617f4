#!/usr/bin/env python3
"""Find flaky tests by comparing outcomes across several JUnit XML reports.

A test is flaky when it both passed and failed across the given runs (or within one run,
e.g. pytest-rerunfailures writes several results for one test). Tests that failed in every
run are listed separately as consistently failing. Accepts files and folders (searched
recursively for *.xml).
"""
from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def outcome_of(case: ET.Element) -> tuple[str, str | None]:
    for child in case:
        tag = child.tag.split("}")[-1]
        if tag in ("failure", "error"):
            message = (child.get("message") or child.get("type") or (child.text or "").strip()).strip()
            first_line = message.splitlines()[0] if message else ""
            return "failed", first_line[:120]
        if tag == "skipped":
            return "skipped", None
        if tag in ("flakyFailure", "flakyError", "rerunFailure", "rerunError"):
            # Surefire/pytest rerun markers: the test failed at least once before passing.
            message = (child.get("message") or child.get("type") or "").strip()
            return "flaky-pass", message.splitlines()[0][:120] if message else ""
    return "passed", None


def iter_reports(inputs: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in inputs:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.xml") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(str(path))
    return files


def collect(files: list[Path]) -> dict[str, dict]:
    tests: dict[str, dict] = {}
    for run_index, path in enumerate(files):
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise ValueError(f"{path} is not well-formed XML: {exc}")
        if root.tag.split("}")[-1] not in ("testsuites", "testsuite"):
            raise ValueError(f"{path} is not a JUnit report (root element is <{root.tag}>)")
        for case in root.iter():
            if case.tag.split("}")[-1] != "testcase":
                continue
            name = case.get("name") or "?"
            classname = case.get("classname") or case.get("class") or ""
            test_id = f"{classname}::{name}" if classname else name
            outcome, message = outcome_of(case)
            entry = tests.setdefault(test_id, {"id": test_id, "passed": 0, "failed": 0, "skipped": 0,
                                               "runs": set(), "first_failure": None, "failed_in": []})
            entry["runs"].add(run_index)
            if outcome == "flaky-pass":
                entry["passed"] += 1
                entry["failed"] += 1
                outcome = "failed"
            elif outcome in ("passed", "skipped"):
                entry[outcome] += 1
            else:
                entry["failed"] += 1
            if outcome == "failed":
                if entry["first_failure"] is None:
                    entry["first_failure"] = message
                if str(path) not in entry["failed_in"]:
                    entry["failed_in"].append(str(path))
    return tests


def analyse(tests: dict[str, dict], min_runs: int) -> dict:
    flaky, broken = [], []
    for entry in tests.values():
        runs = len(entry.pop("runs"))
        entry["reports"] = runs
        executed = entry["passed"] + entry["failed"]
        entry["fail_rate"] = round(entry["failed"] / executed, 3) if executed else 0.0
        if runs < min_runs:
            continue
        if entry["passed"] and entry["failed"]:
            flaky.append(entry)
        elif entry["failed"] and not entry["passed"]:
            broken.append(entry)
    flaky.sort(key=lambda e: (-e["fail_rate"], e["id"]))
    broken.sort(key=lambda e: e["id"])
    return {"flaky": flaky, "always_failing": broken, "tests": len(tests)}


def render(result: dict, reports: int) -> str:
    out = [f"reports: {reports}  tests: {result['tests']}  flaky: {len(result['flaky'])}  "
           f"always failing: {len(result['always_failing'])}"]
    if result["flaky"]:
        out += ["", "flaky (passed and failed):"]
        for e in result["flaky"]:
            out.append(f"  {e['fail_rate'] * 100:5.1f}% failed ({e['failed']}/{e['passed'] + e['failed']})  {e['id']}")
            if e["first_failure"]:
                out.append(f"         first failure: {e['first_failure']}")
    if result["always_failing"]:
        out += ["", "always failing:"]
        for e in result["always_failing"]:
            reason = f"  - {e['first_failure']}" if e["first_failure"] else ""
            out.append(f"  {e['failed']} run(s)  {e['id']}{reason}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Find flaky tests by comparing outcomes across JUnit XML reports from repeated runs.")
    parser.add_argument("reports", nargs="+", type=Path, help="JUnit XML files or folders containing them")
    parser.add_argument("--min-runs", type=int, default=1, metavar="N",
                        help="only judge tests that appear in at least N reports (default 1)")
    parser.add_argument("--fail-on-flaky", action="store_true", help="exit 1 when any flaky test is found")
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON")
    args = parser.parse_args(argv)
    try:
        files = iter_reports(args.reports)
        if not files:
            raise ValueError("no *.xml reports found in the given folders")
        result = analyse(collect(files), args.min_runs)
    except FileNotFoundError as exc:
        print(f"error: report not found: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"reports": [str(f) for f in files], **result}, indent=2, sort_keys=True))
    else:
        print(render(result, len(files)))
    return 1 if args.fail_on_flaky and result["flaky"] else 0


if __name__ == "__main__":
    sys.exit(main())
