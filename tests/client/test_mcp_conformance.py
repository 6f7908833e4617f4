"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in tests/foreign and installed
there by .ci/run with the Node.js 22 it needs) run against ``skillreg mcp --http`` on 127.0.0.1, serving a real build
whose skills have files in subfolders: every check of the scenarios below succeeds, none fails, warns or is
skipped (a server that declares no extension, or lists nothing, has its checks skipped, which is no pass)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.foreign import FOREIGN, foreign_command
from helpers.mcp import http_server

from builder.core.urls import detail_path

CONFORMANCE = FOREIGN / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
SCENARIOS = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory",
             "server-initialize", "ping", "dns-rebinding-protection"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def conformance() -> list[str]:
    return foreign_command(CONFORMANCE)


def run_scenario(command: list[str], url: str, scenario: str, out: Path) -> tuple[list[dict[str, object]], str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(out), "NO_COLOR": "1", "DO_NOT_TRACK": "1"}
    result = subprocess.run([*command, "server", "--url", url, "--scenario", scenario, "--output-dir", str(out)],
                            cwd=out, env=env, capture_output=True, text=True, timeout=300)
    [checks_file] = sorted(out.rglob("checks.json"))
    summary = next((line for line in result.stdout.splitlines() if line.startswith("Passed:")), "")
    return json.loads(checks_file.read_text()), f"{scenario}: {summary} (exit {result.returncode})"


def test_the_official_conformance_suite_passes_with_nothing_skipped(site: Path, conformance: list[str],
                                                                    tmp_path: Path) -> None:
    files = json.loads((site / detail_path("csv-profiler")).read_text())["files"]
    assert any("/" in f["path"] for f in files)  # the registry has files in subfolders for the directory checks
    summaries = []
    with http_server(str(site), cwd=tmp_path) as url:
        for scenario in SCENARIOS:
            out = tmp_path / scenario
            out.mkdir()
            checks, summary = run_scenario(conformance, url, scenario, out)
            summaries.append(summary)
            assert checks, summary
            bad = [(c["id"], c["status"], c.get("errorMessage")) for c in checks if c["status"] != "SUCCESS"]
            assert not bad, (summary, bad)
    print("\n".join(summaries))
