"""Tests for skills/dockerfile-lint/scripts/lint_dockerfile.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "dockerfile-lint" / "scripts" / "lint_dockerfile.py"

BAD = """FROM python AS build
MAINTAINER ops@example.invalid
RUN apt-get update
RUN apt-get install curl git && \\
    pip install -r requirements.txt
ENV API_TOKEN=abc123 LOG_LEVEL=info
ADD . /app
RUN cd /app && curl -fsSL https://get.example.invalid/install.sh | bash
# dockerfile-lint ignore=sudo
RUN sudo make install

FROM build AS test
FROM ubuntu:latest
COPY --from=build /app /app
CMD python /app/main.py
"""

GOOD = """# syntax=docker/dockerfile:1
FROM python:3.12-slim AS base
RUN apt-get update \\
 && apt-get install -y --no-install-recommends curl \\
 && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir flask
ARG GITHUB_TOKEN
COPY . /app
ADD vendor.tar.gz /opt/
WORKDIR /app
USER 10001
ENTRYPOINT ["python", "main.py"]
"""


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, cwd=cwd)


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "root user" in result.stdout


def test_bad_dockerfile_reports_every_rule(tmp_path):
    (tmp_path / "Dockerfile").write_text(BAD, encoding="utf-8")
    result = run(cwd=tmp_path)
    assert result.returncode == 1
    found = [line.split(": ", 3)[:3] for line in result.stdout.splitlines()[:-1]]
    assert [(loc, sev, rule.split("]")[0] + "]") for loc, sev, rule in found] == [
        ("Dockerfile:1", "error", "[from-latest]"),
        ("Dockerfile:2", "warning", "[maintainer]"),
        ("Dockerfile:3", "warning", "[apt-update-alone]"),
        ("Dockerfile:4", "warning", "[apt-no-clean]"),
        ("Dockerfile:4", "warning", "[apt-no-recommends]"),
        ("Dockerfile:4", "error", "[apt-no-yes]"),
        ("Dockerfile:4", "warning", "[pip-no-cache]"),
        ("Dockerfile:6", "error", "[secret-in-env]"),
        ("Dockerfile:7", "warning", "[add-instead-of-copy]"),
        ("Dockerfile:8", "warning", "[cd-in-run]"),
        ("Dockerfile:8", "warning", "[curl-pipe-shell]"),
        ("Dockerfile:13", "error", "[from-latest]"),
        ("Dockerfile:13", "error", "[root-user]"),
        ("Dockerfile:15", "warning", "[shell-form-cmd]"),
    ]
    assert result.stdout.splitlines()[-1] == "5 error(s), 9 warning(s)"
    assert "Dockerfile:6: error: [secret-in-env] ENV API_TOKEN bakes a secret into the image layers" in result.stdout


def test_good_dockerfile_is_clean(tmp_path):
    path = tmp_path / "Containerfile"
    path.write_text(GOOD, encoding="utf-8")
    result = run(str(path), "--strict")
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "0 error(s), 0 warning(s)"


def test_user_root_ignore_and_json(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text("FROM alpine:3.19\nRUN apk add curl\nUSER app\nUSER root\n", encoding="utf-8")
    result = run(str(path), "--json", "--ignore", "apk-no-cache")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert [(f["line"], f["rule"]) for f in data["findings"]] == [(4, "root-user")]
    warn_only = tmp_path / "W.Dockerfile"
    warn_only.write_text("FROM alpine:3.19\nRUN apk add curl\nUSER 1000\n", encoding="utf-8")
    assert run(str(warn_only)).returncode == 0
    assert run(str(warn_only), "--strict").returncode == 1


def test_bad_input_exits_two(tmp_path):
    result = run(str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "error: Dockerfile not found" in result.stderr
    notes = tmp_path / "notes.txt"
    notes.write_text("just text\n", encoding="utf-8")
    result = run(str(notes))
    assert result.returncode == 2
    assert "has no FROM instruction" in result.stderr
    result = run(str(notes), "--ignore", "nope")
    assert result.returncode == 2
    assert "unknown rule(s): nope" in result.stderr
