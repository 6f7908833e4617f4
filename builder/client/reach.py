"""Where a registry may send the client, judged on the addresses a host resolves to, never on how it is spelled.

A connection resolves its host once (``resolve_host``), judges every address the answer holds, and connects to
one of those addresses, so a DNS answer that changes between the check and the connect (rebinding) cannot slip
through; TLS and the Host header keep the name. Numeric spellings are read as the resolver reads them
(``127.1``, ``2130706433`` and ``0x7f000001`` are 127.0.0.1), and an IPv6 address that carries an IPv4 one
(mapped, 6to4, NAT64) is judged by the IPv4 one.

- a registry named only by a lock file (data from a checkout) reaches public addresses only;
- a registry the user named is reached wherever it is, and any other host it sends the client to may be no
  more local than the registry itself: this machine only from this machine, a local network only from one;
- plain http:// reaches this machine only.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ClientError

PUBLIC, PRIVATE, LOOPBACK = "public", "private", "loopback"
_LOCALITY = {PUBLIC: 0, PRIVATE: 1, LOOPBACK: 2}  # how close to this machine an address of each kind is
_WHERE = {LOOPBACK: "on this machine", PRIVATE: "on a local network"}
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known prefix: the last 32 bits are an IPv4 address

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolved = list[tuple[int, tuple[Any, ...]]]  # (address family, socket address), in the resolver's order


def resolve_host(host: str, port: int) -> Resolved:
    """Every address ``host`` resolves to, from the system resolver: the client's one place that resolves a name
    (tests give a made-up name an address here)."""
    return [(family, sockaddr) for family, _, _, _, sockaddr in
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def literal_address(host: str) -> Address | None:
    """The address ``host`` spells, read as the resolver reads it, or None when it is a name."""
    text = host.strip("[]")
    if not text:
        return None
    try:
        found = socket.getaddrinfo(text, None, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        return None
    return _address(found[0][4][0])


def _address(text: object) -> Address:
    return ipaddress.ip_address(str(text).partition("%")[0])


def _embedded(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, NAT64's well-known prefix), which is where a
    connection to it ends up."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None or address.sixtofour is not None:
        return address.ipv4_mapped or address.sixtofour
    return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in _NAT64 else None


def _shown(address: Address) -> str:
    embedded = _embedded(address)
    return f"{address} ({embedded})" if embedded is not None else str(address)


def address_kind(address: Address) -> str:
    """``loopback`` (this machine, the unspecified address included: connecting to it reaches this machine),
    ``private`` (anything not globally routable: private, shared, link-local, site-local, reserved, multicast...)
    or ``public``."""
    address = _embedded(address) or address
    if address.is_loopback or address.is_unspecified:
        return LOOPBACK
    site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    if not address.is_global or address.is_private or address.is_link_local or address.is_reserved or \
            address.is_multicast or site_local:
        return PRIVATE
    return PUBLIC


def host_kind(host: str) -> str:
    """What ``host`` is before any name is resolved: ``loopback`` for localhost (and ``*.localhost``) and for an
    address of this machine however it is spelled, the address's kind for any other address, ``public`` for a
    name (judged on connecting by the addresses it resolves to)."""
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return LOOPBACK
    address = literal_address(name)
    return PUBLIC if address is None else address_kind(address)


class Reach:
    """Where the connections of one registry may land. Shared by the threads of one transport."""

    def __init__(self, registry_url: str, *, public_only: bool = False) -> None:
        self.registry_url = registry_url
        self.registry_host = (urlsplit(registry_url).hostname or "").lower()
        self.public_only = public_only
        self._registry_kind: str | None = None  # the least local kind the registry's host has resolved to
        self._lock = threading.Lock()

    def registry_kind(self) -> str:
        """How local the registry is: what its host resolved to on connecting (once it has), else its spelling."""
        if self.public_only:
            return PUBLIC
        return self._registry_kind or host_kind(self.registry_host)

    def limit(self, host: str) -> str:
        """The most local kind of address ``host`` may resolve to."""
        if self.public_only:
            return PUBLIC
        if host.lower() == self.registry_host:
            return LOOPBACK  # the registry the user named, wherever it is
        return self.registry_kind()

    def addresses(self, url: str, host: str, port: int, *, plain_http: bool) -> Resolved:
        """The addresses to connect to for ``url`` on ``host``: resolved once, every one judged; a ClientError
        naming the URL and the address when one of them may not be reached."""
        found = resolve_host(host, port)
        limit = self.limit(host)
        kinds = []
        for _, sockaddr in found:
            address = _address(sockaddr[0])
            kind = address_kind(address)
            if plain_http and kind != LOOPBACK:
                raise ClientError(f"{url}: {host} resolves to {_shown(address)}, not this machine; plain http:// is "
                                  "allowed only to this machine")
            if _LOCALITY[kind] > _LOCALITY[limit]:
                raise ClientError(self._refusal(f"{url}: {host} resolves to {_shown(address)}", kind))
            kinds.append(kind)
        if kinds and host.lower() == self.registry_host:
            least = min(kinds, key=_LOCALITY.__getitem__)
            with self._lock:  # only ever tightened, so a later answer cannot widen where redirects may go
                if self._registry_kind is None or _LOCALITY[least] < _LOCALITY[self._registry_kind]:
                    self._registry_kind = least
        return found

    def through_proxy(self, url: str, host: str, port: int, *, plain_http: bool) -> None:
        """Judge ``host`` for a request a proxy (the user's setting) carries: by what the name resolves to here,
        since the proxy resolves it again itself. A lock's registry whose name does not resolve here is refused."""
        try:
            self.addresses(url, host, port, plain_http=plain_http)
        except OSError:
            if self.public_only:
                raise ClientError(f"{url}: {host} does not resolve on this machine, so whether it is public cannot "
                                  "be told; a registry from a lock file is used only when it is public. To use it, "
                                  f"name it: --registry {self.registry_url}") from None

    def redirect_problem(self, from_url: str, to_url: str) -> str | None:
        """Why the client must not follow a redirect from ``from_url`` to ``to_url``, or None when it may (a name
        is judged again by its addresses on connecting).

        Only http(s); never from https:// down to http://; plain http:// only between loopback hosts, and only
        for a registry on loopback; no host more local than the registry (than public, for a lock's registry)."""
        source, target = urlsplit(from_url), urlsplit(to_url)
        scheme = target.scheme.lower()
        if scheme not in ("http", "https"):
            return f"{from_url} redirects to {to_url}; only https:// redirects are followed"
        target_kind = host_kind(target.hostname or "")
        if scheme == "http" and (source.scheme.lower() == "https" or urlsplit(self.registry_url).scheme == "https"
                                 or host_kind(self.registry_host) != LOOPBACK or target_kind != LOOPBACK):
            return f"{from_url} redirects to {to_url}; refusing to follow it off https://"
        if _LOCALITY[target_kind] > _LOCALITY[self.limit(target.hostname or "")]:
            return self._refusal(f"{from_url} redirects to {to_url}", target_kind)
        return None

    def _refusal(self, what: str, kind: str) -> str:
        if self.public_only:
            return (f"{what}, {_WHERE[kind]}; a registry from a lock file is used only when it is public. To use it, "
                    f"name it: --registry {self.registry_url}")
        return f"{what}, {_WHERE[kind]}; a registry on {self.registry_host} may not send the client there"
