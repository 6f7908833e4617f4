"""Every command that serves words a busy port the same way and exits with the same code."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from helpers import write_tree
from helpers.build import skillreg_command

from builder.core.errors import EXIT_FAILURE


def test_serve_and_mcp_http_say_the_same_of_a_busy_port(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"registry.yaml": "title: T\n",
                                 "site/api/v1/index.json": '{"api_version": 1, "count": 0, "skills": []}'})
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        said = {}
        for command in (["serve", "--port", str(port)], ["mcp", "--registry", "site", "--http", str(port)]):
            result = subprocess.run([*skillreg_command(), *command], cwd=root, capture_output=True, text=True,
                                    timeout=60, stdin=subprocess.DEVNULL)
            said[command[0]] = (result.returncode, result.stderr.split("; pick another with ")[0])
    assert said["serve"] == said["mcp"] == (EXIT_FAILURE, f"Error: port {port} on 127.0.0.1 is in use")
