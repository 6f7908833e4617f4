"""``skillreg mcp`` as a host reaches it: the MCP SDK's client over stdio or streamable HTTP, and a running
``skillreg mcp --http`` on a free port of 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from helpers.client import SKILLREG, wait_for


def skillreg_command() -> str:
    return str(SKILLREG) if SKILLREG.exists() else "skillreg"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def http_server(registry: str, *extra: str, cwd: Path) -> Iterator[str]:
    """``skillreg mcp --registry REGISTRY --http 127.0.0.1:PORT EXTRA...`` until the block ends; yields its URL."""
    port = free_port()
    log = open(cwd / f"mcp-http-{port}.log", "w")  # noqa: SIM115 - open while the server runs
    process = subprocess.Popen([skillreg_command(), "mcp", "--registry", registry, "--http", f"127.0.0.1:{port}",
                                *extra], cwd=cwd, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: listening(port) or process.poll() is not None, timeout=60)
        assert process.poll() is None, (cwd / f"mcp-http-{port}.log").read_text()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextlib.asynccontextmanager
async def session(registry: str | None = None, url: str | None = None, *, cwd: Path,
                  modern: bool = True) -> AsyncIterator[Any]:
    """An SDK client session with ``skillreg mcp`` over stdio (``registry``) or streamable HTTP (``url``), at
    2026-07-28 (``server/discover``) or, with ``modern=False``, 2025-11-25 (the initialize handshake)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    async with contextlib.AsyncExitStack() as stack:
        if url is not None:
            read, write = await stack.enter_async_context(streamable_http_client(url))
        else:
            assert registry is not None
            params = StdioServerParameters(command=skillreg_command(), args=["mcp", "--registry", registry],
                                           env=dict(os.environ), cwd=cwd)
            errlog = stack.enter_context(open(cwd / "mcp-stderr.txt", "w"))  # noqa: SIM115 - the stack closes it
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        client = await stack.enter_async_context(ClientSession(read, write))
        if modern:
            await discover(client)
        else:
            await client.initialize()
        yield client


async def discover(client: Any, attempts: int = 6) -> None:
    """``server/discover``, asked again while it times out: the SDK waits 10 s for it, less than a server started
    on a busy machine may take to import its modules (a late answer to an earlier probe is dropped)."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    for attempt in range(attempts):
        try:
            await client.discover()
            return
        except MCPError as exc:
            if exc.code != types.REQUEST_TIMEOUT or attempt == attempts - 1:
                raise


async def request(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request the SDK has no typed call for (the extension's methods), its result as the wire has it."""
    import mcp_types as types
    from pydantic import ConfigDict, TypeAdapter

    class Params(types.RequestParams):
        model_config = ConfigDict(extra="allow")  # the SDK's base drops fields it does not know

    result: dict[str, Any] = await client.send_request(types.Request(method=method, params=Params(**params)),
                                                        TypeAdapter(dict[str, Any]))
    return result


async def list_all(client: Any, method: str = "skills/list", key: str = "skills") -> tuple[list[Any], int]:
    """Every entry of a paginated listing, and how many pages it took."""
    entries: list[Any] = []
    cursor = None
    pages = 0
    while True:
        page = await request(client, method, {"cursor": cursor} if cursor else {})
        pages += 1
        entries += page[key]
        cursor = page.get("nextCursor")
        if not cursor:
            return entries, pages
