"""``skillreg serve`` as a person runs it while a skill is invalid: --keep-going publishes the others, and without
it a first build that fails is said on the terminal and answered 503 with its error, never an empty listing."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import write_tree
from helpers.build import skillreg_command

REGISTRY = "title: Serve test\ncategories:\n  - slug: data\n    title: Data\n"
GOOD = ("---\nname: good\ndescription: Profiles demo data files when asked what a data file holds.\nlicense: MIT\n"
        "metadata:\n  category: data\n---\n# Good\n\nRead the data.\n")
BAD = "---\nname: Bad\ndescription: Broken.\n---\n# Bad\n"


def status_and_body(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


@contextmanager
def serving(root: Path, *args: str) -> Iterator[tuple[str, list[str]]]:
    """``skillreg serve --port 0 ARGS`` in ``root`` as its own process: yields its URL and the lines it printed
    (stdout and stderr, in order) up to "Serving ..."; stopped with Ctrl-C."""
    process = subprocess.Popen([*skillreg_command(), "serve", "--port", "0", *args], cwd=root,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    try:
        lines: list[str] = []
        while not (lines and lines[-1].startswith("Serving ")):
            line = process.stdout.readline()
            assert line, "".join(lines)  # it ended before serving
            lines.append(line)
        yield lines[-1].split(" at ", 1)[1].split(" ", 1)[0], lines
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_serve_keep_going_publishes_the_valid_skills_and_names_those_left_out(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"registry.yaml": REGISTRY, "skills/good/SKILL.md": GOOD,
                                 "skills/bad/SKILL.md": BAD})
    with serving(root, "--keep-going") as (url, lines):
        assert status_and_body(url + "skills/good/")[0] == 200
        assert status_and_body(url + "skills/bad/")[0] == 404
    assert "Left out 1 invalid skill: skills/bad (errors: SK104 in 1, SK106 in 1)\n" in lines
    assert "Built 1 skill into site/\n" in lines


def test_serve_with_no_build_to_show_answers_503_with_the_error_until_it_is_fixed(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"registry.yaml": REGISTRY, "skills/good/SKILL.md": GOOD,
                                 "skills/bad/SKILL.md": BAD})
    with serving(root) as (url, lines):
        for path in ("", "skills/good/", "api/v1/index.json"):
            status, body = status_and_body(url + path)
            assert status == 503, path
            assert "<pre>the build stopped: 2 errors, 0 warnings in 1 of 2 skills; nothing was written</pre>" in body
        assert ("Error: the build stopped: 2 errors, 0 warnings in 1 of 2 skills; nothing was written; nothing to "
                "serve until a build succeeds (pages answer 503 with this error); --keep-going publishes the valid "
                "skills\n") in lines
        (root / "skills/bad/SKILL.md").write_text(BAD.replace("Bad", "bad"), encoding="utf-8")
        for _ in range(600):  # the fix is picked up by the next poll (once a second); the loop only bounds it
            if status_and_body(url + "skills/good/")[0] == 200:
                break
            time.sleep(0.1)
        assert status_and_body(url + "skills/good/")[0] == 200


def test_serve_answers_a_folder_without_a_page_404_as_a_static_host_does(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"registry.yaml": REGISTRY, "skills/good/SKILL.md": GOOD})
    with serving(root) as (url, _):
        status, body = status_and_body(url + "api/v1/")
    assert status == 404
    assert "Directory listing" not in body
