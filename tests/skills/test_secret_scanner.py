"""Tests for skills/secret-scanner/scripts/scan_diff.py.

Secret-looking strings are assembled at runtime so this file never contains one literally.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "secret-scanner" / "scripts" / "scan_diff.py"

AWS_ID = "AKIA" + "QWERTYUIOPASDFGH"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzz9q8kLmN0"
KEY_HEADER = "-----BEGIN " + "OPENSSH PRIVATE KEY-----"
GH_TOKEN = "ghp" + "_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, stdin="" if stdin is None else stdin)


def make_diff() -> str:
    return f"""diff --git a/config/settings.py b/config/settings.py
index 1111111..2222222 100644
--- a/config/settings.py
+++ b/config/settings.py
@@ -10,3 +10,7 @@ DEBUG = False
 TIMEOUT = 30
-API_KEY = ""
+API_KEY = "9fQ2xLr7TzWb3KpV0sHd"
+AWS_ACCESS_KEY_ID = "{AWS_ID}"
+PASSWORD = "changeme-please"
 RETRIES = 3
+DB_URL = "postgres://app:s3cr3tPw@db.internal:5432/app"
+aws_secret_access_key = "{AWS_SECRET}"
diff --git a/keys/deploy b/keys/deploy
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/keys/deploy
@@ -0,0 +1,2 @@
+{KEY_HEADER}
+b3BlbnNzaC1rZXktdjEAAAAA
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-token = "{GH_TOKEN}"
"""


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "unified diff" in result.stdout


def test_reports_added_secrets_with_file_and_line(tmp_path):
    diff = tmp_path / "change.diff"
    diff.write_text(make_diff(), encoding="utf-8")
    result = run(str(diff))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "config/settings.py:11: generic-secret: high-entropy value assigned to 'API_KEY' (9fQ2************)",
        "config/settings.py:12: aws-access-key-id: AWS access key ID (AKIA************)",
        "config/settings.py:15: url-credentials: password in URL (s3******)",
        "config/settings.py:16: aws-secret-access-key: AWS secret access key (wJal************)",
        "keys/deploy:1: private-key: private key header (BEGIN OPENSSH PRIVATE KEY)",
        "5 potential secrets found",
    ]
    assert AWS_ID not in result.stdout and AWS_SECRET not in result.stdout


def test_clean_diff_placeholder_and_allow_pragma_exit_zero():
    diff = """--- a/app.py
+++ b/app.py
@@ -1,0 +1,4 @@
+password = "your-password-here"
+api_token = "aaaaaaaaaaaaaaaaaaaa"
+SECRET = "{{ vault_secret }}"
+token = "%s"  # secret-scan: allow
""".replace("%s", GH_TOKEN)
    result = run(stdin=diff)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "0 potential secrets found"


def test_json_output_and_files_mode(tmp_path):
    source = tmp_path / "deploy.sh"
    source.write_text(f"#!/bin/sh\necho start\nexport GITHUB_TOKEN={GH_TOKEN}\n", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\0\1" + AWS_ID.encode())
    result = run("--files", str(source), str(tmp_path / "blob.bin"), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["count"] == 1
    assert report["findings"][0] == {"file": str(source), "line": 3, "rule": "github-token",
                                     "description": "GitHub token", "match": "ghp_************"}


def test_rejects_non_diff_input_and_missing_file(tmp_path):
    result = run(stdin="just some text\nwithout hunks\n")
    assert result.returncode == 2
    assert "does not look like a unified diff" in result.stderr
    result = run(str(tmp_path / "missing.diff"))
    assert result.returncode == 2
    assert "error: file not found" in result.stderr
