"""Tests for skills/dependency-pin-check/scripts/check_pins.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "dependency-pin-check" / "scripts" / "check_pins.py"
HASH = "58cd2187c01e70e6e26505bca751777aa9f2ee0b7f4300988b709f44e013003f"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, cwd=cwd)


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "--require-hashes" in result.stdout


def test_reports_each_problem_kind_with_location(tmp_path):
    (tmp_path / "base.txt").write_text("Requests==2.31.0\nurllib3 ~= 2.0\n", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text(
        "# runtime\n"
        "--index-url https://pypi.org/simple\n"
        "--extra-index-url https://pkgs.internal.invalid/simple\n"
        "-r base.txt\n"
        "requests==2.31.0 \\\n"
        f"    --hash=sha256:{HASH}\n"
        "Django>=4.2,<5\n"
        "flask\n"
        "numpy==1.26.*\n"
        "mylib @ git+https://github.com/acme/mylib@main\n"
        "tool @ git+https://github.com/acme/tool@0123456789abcdef0123456789abcdef01234567\n"
        "-e ./local_pkg\n"
        "pyyaml==6.0.1; python_version >= \"3.8\"  # comment\n",
        encoding="utf-8")
    result = run("requirements.txt", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines == [
        "requirements.txt:3: warning: [extra-index] -: an extra index lets a public package shadow a private "
        "one; prefer --index-url with a proxy that serves both",
        "base.txt:2: error: [range] urllib3: '~=2.0' allows several versions; pin one with ==",
        "requirements.txt:5: error: [duplicate] requests: already listed at base.txt:1",
        "requirements.txt:7: error: [range] Django: '>=4.2, <5' allows several versions; pin one with ==",
        "requirements.txt:8: error: [unpinned] flask: no version specifier; pin it with ==",
        "requirements.txt:9: error: [wildcard] numpy: '==1.26.*' matches many versions; pin one exact version",
        "requirements.txt:10: error: [vcs-unpinned] mylib: VCS requirement must reference a full 40-character "
        "commit hash, not a branch or tag",
        "requirements.txt:12: warning: [editable] ./local_pkg: editable installs are not reproducible; build a "
        "wheel or pin a commit instead",
        "9 requirement(s) checked: 6 error(s), 2 warning(s)",
    ]


def test_clean_file_passes_and_strict_warnings(tmp_path):
    req = tmp_path / "req.txt"
    req.write_text("attrs==23.2.0\nPyYAML===6.0.1\n", encoding="utf-8")
    result = run(str(req))
    assert result.returncode == 0
    assert result.stdout.strip() == "2 requirement(s) checked: 0 error(s), 0 warning(s)"
    dev = tmp_path / "dev.txt"
    dev.write_text("-e .\n", encoding="utf-8")
    assert run(str(dev)).returncode == 0
    assert run(str(dev), "--strict").returncode == 1


def test_require_hashes_allow_and_json(tmp_path):
    req = tmp_path / "req.txt"
    req.write_text(f"attrs==23.2.0 --hash=sha256:{HASH}\nsix==1.16.0\nsetuptools\n", encoding="utf-8")
    result = run(str(req), "--require-hashes", "--allow", "SetupTools", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["packages"] == 3
    assert [(f["kind"], f["package"], f["location"]) for f in report["findings"]] == [
        ("missing-hash", "six", f"{req}:2"),
    ]  # setuptools is exempt from every check via --allow


def test_missing_file_exits_two(tmp_path):
    result = run(str(tmp_path / "nope.txt"))
    assert result.returncode == 2
    assert "error: requirements file not found" in result.stderr
