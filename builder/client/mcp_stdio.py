"""``skillreg mcp`` over stdio, stopped by one Ctrl-C.

The SDK reads stdin in one of anyio's worker threads, which a cancelled task waits for and interpreter exit
joins: in a terminal, where no line comes, Ctrl-C waited for one that never came. Here a daemon thread reads the
descriptor and hands each line to the event loop, so an interrupt ends the loop at once and the blocked read
holds nothing up.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

STDIN = 0
READ_SIZE = 1 << 16


async def _stdin_lines() -> AsyncIterator[str]:
    """stdin's lines (UTF-8, a bad byte replaced) until end of input."""
    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    send, receive = anyio.create_memory_object_stream[str](16)
    token = anyio.lowlevel.current_token()

    def pump() -> None:
        pending = b""
        try:
            while chunk := os.read(STDIN, READ_SIZE):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    anyio.from_thread.run(send.send, line.decode("utf-8", "replace") + "\n", token=token)
            if pending:
                anyio.from_thread.run(send.send, pending.decode("utf-8", "replace"), token=token)
            anyio.from_thread.run(send.aclose, token=token)
        except (OSError, RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # the loop has ended (or stdin failed): nobody is left to tell

    # A daemon thread using the descriptor, not sys.stdin: exit neither joins it nor waits for the buffer's lock.
    threading.Thread(target=pump, name="skillreg-mcp-stdin", daemon=True).start()
    async with receive:
        async for line in receive:
            yield line


def run_stdio(server: MCPServer) -> None:
    """Serve ``server`` over stdin and stdout until end of input; Ctrl-C raises KeyboardInterrupt at once."""
    import anyio
    from mcp.server.stdio import stdio_server

    interrupted = False

    async def main() -> None:
        nonlocal interrupted
        async with anyio.create_task_group() as group:
            # Ctrl-C cancels everything here by anyio's own scope: asyncio's runner would cancel the main task
            # instead, which a task group waiting on a worker thread may absorb.
            async def on_interrupt() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        interrupted = True
                        group.cancel_scope.cancel()

            group.start_soon(on_interrupt)
            # The transport iterates its stdin with `async for`; the lines above are all it needs of a file.
            async with stdio_server(stdin=cast(Any, _stdin_lines())) as (read, write):
                lowlevel = server._lowlevel_server  # MCPServer.run_stdio_async, with the stdin above
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()

    anyio.run(main)
    if interrupted:
        raise KeyboardInterrupt
