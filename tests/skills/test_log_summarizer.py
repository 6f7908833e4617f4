"""Tests for skills/log-summarizer/scripts/summarize_log.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "log-summarizer" / "scripts" / "summarize_log.py"

PLAIN_LOG = """\
2024-05-01 10:00:00,120 INFO  server: listening on 0.0.0.0:8080
2024-05-01 10:00:05,001 WARN  pool: slow query took 1520ms
2024-05-01 10:01:00,500 ERROR db: connection to 10.0.0.5:5432 refused (attempt 1)
2024-05-01 10:01:02,500 ERROR db: connection to 10.0.0.5:5432 refused (attempt 2)
Traceback (most recent call last):
  File "app.py", line 10, in <module>
2024-05-01 10:02:00,000 ERROR api: user 'bob' not found
2024-05-01 10:03:00,000 INFO  api: retrying after error
2024-05-01 10:04:00,000 CRITICAL db: connection to 10.0.0.5:5432 refused (attempt 3)
"""


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, stdin=stdin)


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "--min-level" in result.stdout


def test_plain_text_summary(tmp_path):
    log = tmp_path / "app.log"
    log.write_text(PLAIN_LOG, encoding="utf-8")
    result = run(str(log))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "lines: 9  (without a level: 2)",
        "time span: 2024-05-01 10:00:00,120 .. 2024-05-01 10:04:00,000",
        "levels: INFO=2  WARN=1  ERROR=3  FATAL=1",
        "",
        "top ERROR+ messages (3 distinct):",
        "      2  ERROR  db: connection to <ip> refused (attempt <n>)",
        f"         first at {log}:3",
        "      1  FATAL  db: connection to <ip> refused (attempt <n>)",
        f"         first at {log}:9",
        "      1  ERROR  api: user <str> not found",
        f"         first at {log}:7",
    ]


def test_json_lines_and_logfmt_from_stdin():
    stdin = (
        '{"ts":"2024-05-01T10:00:00Z","level":"error","msg":"timeout after 30s for order 1234"}\n'
        'level=warning msg="disk 91 percent full" ts=2024-05-01T10:00:01Z\n'
        '{"ts":"2024-05-01T10:00:02Z","level":"ERROR","msg":"timeout after 31s for order 99"}\n'
        'not a log line at all\n'
    )
    result = run("-", "--min-level", "warn", "--json", stdin=stdin)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["levels"] == {"TRACE": 0, "DEBUG": 0, "INFO": 0, "WARN": 1, "ERROR": 2, "FATAL": 0}
    assert report["unleveled"] == 1
    assert report["first_timestamp"] == "2024-05-01T10:00:00Z"
    assert report["last_timestamp"] == "2024-05-01T10:00:02Z"
    assert [(g["count"], g["level"], g["template"]) for g in report["top"]] == [
        (2, "ERROR", "timeout after <n> for order <n>"),
        (1, "WARN", "disk <n> percent full"),
    ]
    assert report["top"][0]["first"] == "-:1"


def test_top_limits_groups(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("ERROR alpha\nERROR beta\nERROR beta\nERROR gamma\n", encoding="utf-8")
    result = run(str(log), "--top", "1", "--json")
    report = json.loads(result.stdout)
    assert report["distinct_messages"] == 3
    assert [g["template"] for g in report["top"]] == ["beta"]


def test_missing_file_exits_two(tmp_path):
    result = run(str(tmp_path / "missing.log"))
    assert result.returncode == 2
    assert "error: log file not found" in result.stderr


def test_bad_option_value_fails():
    result = run("-", "--min-level", "loud", stdin="")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
