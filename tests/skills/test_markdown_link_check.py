"""Tests for skills/markdown-link-check/scripts/check_links.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "markdown-link-check" / "scripts" / "check_links.py"

README = """# Project Docs

See the [install guide](guide/install.md#requirements) and [usage](guide/usage.md).
Jump to [FAQ](#faq-and-tips) or [missing](#nope). ![logo](img/logo.png "Logo")
External: [site](https://example.invalid/x), `[not a link](nowhere.md)`.

```bash
echo "[fake](missing.md)"
```

## FAQ and Tips!
[up](../outside.md) [encoded](guide/my%20notes.md) [folder](guide/)

[ref]: guide/install.md#step-2-configure
[bad-ref]: guide/install.md#step-3
"""

INSTALL = """Install
=======

## Requirements
## Step 2: Configure
## Step 2: Configure
<a id="custom-anchor"></a>
Back to [home](/README.md#project-docs), [dup](#step-2-configure-1), [custom](#custom-anchor),
[top](#install) and [code](../src/app.py#L10).
"""


def make_docs(root: Path) -> None:
    (root / "guide").mkdir(parents=True)
    (root / "img").mkdir()
    (root / "src").mkdir()
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "guide" / "install.md").write_text(INSTALL, encoding="utf-8")
    (root / "guide" / "my notes.md").write_text("notes\n", encoding="utf-8")
    (root / "img" / "logo.png").write_bytes(b"\x89PNG")
    (root / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, cwd=cwd)


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "anchors" in result.stdout


def test_reports_broken_links_and_anchors(tmp_path):
    make_docs(tmp_path)
    result = run(cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "README.md:3: guide/usage.md: target does not exist",
        "README.md:4: #nope: anchor #nope not found in this file",
        "README.md:12: ../outside.md: points outside the root folder",
        "README.md:15: guide/install.md#step-3: anchor #step-3 not found in install.md",
        "3 file(s), 15 local link(s) checked, 1 external skipped, 4 broken",
    ]


def test_clean_docs_pass_and_json(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Intro\n\n[b](b.md#usage-notes) [self](#intro)\n", encoding="utf-8")
    (docs / "b.md").write_text("# B\n\n## Usage `notes`\n", encoding="utf-8")
    result = run(str(docs))
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "2 file(s), 2 local link(s) checked, 0 external skipped, 0 broken"
    result = run(str(docs), "--json")
    assert json.loads(result.stdout) == {"files": 2, "checked": 2, "external_skipped": 0, "problems": []}


def test_allow_outside(tmp_path):
    (tmp_path / "shared.md").write_text("# Shared\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("[s](../shared.md#shared)\n", encoding="utf-8")
    assert run(str(docs)).returncode == 1
    assert run(str(docs), "--allow-outside").returncode == 0


def test_missing_path_exits_two(tmp_path):
    result = run(str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "error:" in result.stderr
