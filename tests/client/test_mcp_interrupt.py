"""``skillreg mcp`` over stdio in a terminal: one Ctrl-C stops it, as it stops any command."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
from pathlib import Path

from helpers.mcp import skillreg_command

from builder.core.errors import EXIT_INTERRUPTED


def test_one_ctrl_c_stops_the_stdio_server_waiting_on_a_terminal(site: Path, tmp_path: Path) -> None:
    master, terminal = pty.openpty()  # stdin is a terminal where nothing is typed, as when a person runs it
    process = subprocess.Popen([skillreg_command(), "mcp", "--registry", str(site)], cwd=tmp_path, stdin=terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    try:
        os.write(master, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n")
        assert process.stdout is not None
        assert json.loads(process.stdout.readline())["id"] == 1  # serving, and waiting on the terminal again
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)  # before, it waited for a line nobody would type
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
        os.close(terminal)
    assert process.returncode == EXIT_INTERRUPTED
    assert err.decode() == "Interrupted.\n"  # no "Exception ignored in: <module 'threading'...>"
