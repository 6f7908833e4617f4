"""The README's quick start, run as a user pastes it: bash, in a copy of the checkout outside this repository,
with nothing on PATH but what the quick start puts there; ``skillreg serve`` is started, fetched and stopped."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import REPO

pytestmark = pytest.mark.slow  # the README's quickstart, run as written

README = (REPO / "README.md").read_text(encoding="utf-8")
VENV = Path(sys.prefix)


def section(title: str) -> str:
    for part in README.split("\n## ")[1:]:
        if part.startswith(title + "\n"):
            return part
    raise AssertionError(f"README.md has no '## {title}' section")


def quick_start() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)\n```", section("Quick start"), flags=re.S)
    assert len(blocks) == 1, "the quick start is one block to paste"
    return blocks[0].splitlines()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """What a clone holds after the first set-up command, outside this repository: the registry and a venv."""
    if not (VENV / "bin" / "skillreg").is_file():
        pytest.skip("the tests are not running from the venv the set-up commands create")
    root = tmp_path / "skill-registry"
    root.mkdir()
    shutil.copy2(REPO / "registry.yaml", root / "registry.yaml")
    shutil.copytree(REPO / "skills", root / "skills", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (root / ".venv").symlink_to(VENV, target_is_directory=True)
    return root


def _env(home: Path) -> dict[str, str]:
    """A login shell's environment: no venv on PATH, a fresh home (conftest's HOME and cache dirs are kept)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "SKILLREG_REGISTRY")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and Path(p).resolve() != (VENV / "bin").resolve()) or "/usr/bin:/bin"
    env["HOME"] = str(home)
    return env


def test_the_quick_start_works_when_pasted(checkout: Path, tmp_path: Path) -> None:
    lines = quick_start()
    serve_line = lines[-1]
    assert serve_line.startswith("skillreg serve --port 8000"), "the quick start ends by serving the site"
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    assert shutil.which("skillreg", path=env["PATH"]) is None, "skillreg must come from the quick start's PATH"

    script = "set -euo pipefail\n" + "\n".join(lines[:-1]) + "\n"
    done = subprocess.run(["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    count = len([p for p in (checkout / "skills").iterdir() if (p / "SKILL.md").is_file()])
    assert f"Built {count} skills into site/" in out
    assert re.search(r"^csv-profiler  ", out, flags=re.M), out
    project = home / "src" / "my-project"
    assert re.search(r"^Installed csv-profiler \S+ \(sha256:[0-9a-f]{12}…\) into .claude/skills/csv-profiler$",
                     out, flags=re.M), out
    assert "All 1 installed folder(s) match skills-lock.json" in out
    assert (project / ".claude/skills/csv-profiler/SKILL.md").is_file()
    assert (project / "skills-lock.json").is_file()

    # The last line serves until Ctrl-C: run it on a free port (8000 may be taken here), fetch, then press Ctrl-C.
    serve = serve_line.split("#")[0].replace("--port 8000", "--port 0")
    process = subprocess.Popen(["bash", "-c", f'export PATH="$PWD/.venv/bin:$PATH"; exec {serve}'], cwd=checkout,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=_as_in_a_terminal)
    try:
        url = _serving_url(process)
        with urllib.request.urlopen(url + "skills/csv-profiler/", timeout=10) as response:
            assert response.status == 200 and b"csv-profiler" in response.read()
        with urllib.request.urlopen(url + "api/v1/index.json", timeout=10) as response:
            assert b'"csv-profiler"' in response.read()
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            stdout, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            pytest.fail(f"`{serve}` did not stop within 30 s of Ctrl-C; it printed:\n{stdout}\n{stderr}")
    assert process.returncode == 0, stderr
    assert stdout.rstrip().endswith("Stopped.") and "Traceback" not in stderr


def _as_in_a_terminal() -> None:
    """Ctrl-C as a terminal delivers it: a process started with SIGINT ignored (as some test of the suite leaves its
    worker) keeps ignoring it, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _serving_url(process: subprocess.Popen) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    for line in process.stdout:
        found = re.search(r"at (http://127\.0\.0\.1:\d+/) ", line)
        if found:
            return found.group(1)
        assert time.monotonic() < deadline, "skillreg serve did not start serving"
    raise AssertionError(f"skillreg serve stopped before serving: {process.stderr.read() if process.stderr else ''}")


def test_outside_the_checkout_a_missing_registry_is_named(tmp_path: Path) -> None:
    """The quick start exports SKILLREG_REGISTRY because the default registry exists only inside the checkout."""
    if not (VENV / "bin" / "skillreg").is_file():
        pytest.skip("the tests are not running from the venv the set-up commands create")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([str(VENV / "bin" / "skillreg"), "search", "csv"], cwd=elsewhere, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == ("Error: no registry given: pass --registry URL or set SKILLREG_REGISTRY (or run inside a "
                           "registry checkout after `skillreg build`)\n")


def test_the_benchmark_duration_agrees_with_bench_help() -> None:
    done = subprocess.run([sys.executable, "-m", "bench", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    help_text = " ".join(done.stdout.split())
    said = re.search(r"the full suite takes about (\d+) minutes", help_text)
    assert said, help_text
    performance = (REPO / "docs" / "explanation" / "performance.md").read_text(encoding="utf-8")
    assert f"the whole suite takes about {said.group(1)} minutes, as" in " ".join(performance.split())


def test_the_website_guide_shows_the_skill_page_screenshots() -> None:
    guide = REPO / "docs" / "guides" / "website.md"
    shots = re.findall(r"\]\(\.\./(screenshot-skill-[^)]+\.png)\)", guide.read_text(encoding="utf-8"))
    assert sorted(shots) == sorted(f"screenshot-skill-{w}-{part}.png" for w in (1280, 390)
                                   for part in ("panel", "install", "frontmatter"))
    for shot in shots:
        data = (REPO / "docs" / shot).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 300_000, shot
