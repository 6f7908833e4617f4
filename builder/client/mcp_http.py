"""``skillreg mcp --http [HOST:]PORT``: the MCP server over streamable HTTP at ``/mcp``, guarded against DNS
rebinding.

The SDK's transport checks every request's Host and Origin headers against the lists made here: on a loopback
address, the loopback names with this port; on any other address, only what the user allowed by name, since an
unauthenticated endpoint on a network must not answer whatever name points at it. The socket is bound before the
server starts, so a busy port or an unknown host is one line, not a traceback, worded as `serve` words it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import UsageError, cannot_listen
from .reach import host_kind, literal_address

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

MCP_PATH = "/mcp"
DEFAULT_HOST = "127.0.0.1"


@dataclass(frozen=True)
class Listen:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        """Whether only this machine can reach it: the unspecified address (0.0.0.0, ::) listens on every
        interface, although connecting to it reaches this machine."""
        address = literal_address(self.host)
        return host_kind(self.host) == "loopback" and not (address is not None and address.is_unspecified)

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}{MCP_PATH}"


def parse_listen(text: str) -> Listen:
    """``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT``."""
    value = text.strip()
    host, port = DEFAULT_HOST, value
    if value.startswith("["):
        inside, sep, rest = value[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise UsageError(f"--http {text!r}: write an IPv6 address as [ADDRESS]:PORT")
        host, port = inside, rest[1:]
    elif ":" in value:
        host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--http {text!r}: the port must be a number from 1 to 65535")
    if not host or any(c.isspace() or c in "/?#@" for c in host):
        raise UsageError(f"--http {text!r}: {host!r} is not a host name or address")
    return Listen(host, int(port))


def security(listen: Listen, hosts: Sequence[str], origins: Sequence[str]) -> TransportSecuritySettings:
    """The Host and Origin values requests may carry (the SDK refuses any other with HTTP 4xx)."""
    from mcp.server.transport_security import TransportSecuritySettings

    if not listen.loopback and not hosts:
        raise UsageError(f"--http {listen.host}:{listen.port} listens beyond this machine; name the Host values "
                         "clients will send with --allowed-host (and browser origins with --allowed-origin)")
    names = [f"{name}:{listen.port}" for name in ("127.0.0.1", "localhost", "[::1]")] if listen.loopback else []
    allowed_hosts = [*names, *hosts]
    allowed_origins = [f"http://{name}" for name in names] + list(origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts,
                                     allowed_origins=allowed_origins)


def bind(listen: Listen) -> socket.socket:
    try:
        family = socket.AF_INET6 if isinstance(ipaddress.ip_address(listen.host), ipaddress.IPv6Address) \
            else socket.AF_INET
    except ValueError:
        family = socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((listen.host, listen.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise cannot_listen(listen.host, listen.port, exc, "--http [HOST:]PORT") from None
    sock.set_inheritable(True)
    return sock


def serve_http(server: MCPServer, listen: Listen, hosts: Sequence[str], origins: Sequence[str],
               announce: bool = True) -> None:
    """Serve until interrupted."""
    import sys

    import anyio
    import uvicorn

    settings = security(listen, hosts, origins)
    sock = bind(listen)
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=settings, host=listen.host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    if announce:
        print(f"Serving MCP over streamable HTTP at {listen.url} (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
