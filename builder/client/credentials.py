"""Credentials for registries that need them: looked up per origin (scheme, host, port), sent only to that origin.

Sources, first found wins: ``SKILLREG_TOKEN`` (for the origin ``SKILLREG_TOKEN_ORIGIN`` names, else for the
registry the user named for this command, never one read from a lock), a credential helper the user's client
config names for the origin, then ``~/.netrc`` (``NETRC``), whose ``machine`` is ``host`` for the scheme's
default port or ``host:port``. A value is kept in memory only (a helper's for the lifetime it states), never
written, printed or put in an error: messages name the header and its source, with the value "redacted".
"""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import threading
import time
import tomllib
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..core.errors import ClientError, UsageError

GUIDE = "https://skill-registry.github.io/skill-registry/docs/guides/private/"
TOKEN_ENV = "SKILLREG_TOKEN"
TOKEN_ORIGIN_ENV = "SKILLREG_TOKEN_ORIGIN"
CONFIG_ENV = "SKILLREG_CLIENT_CONFIG"
HELPERS_TABLE = "credential-helpers"
HELPER_LIFETIME = 300.0  # seconds a helper's answer is reused when it states no lifetime (expires_in=SECONDS)
DEFAULT_PORTS = {"https": 443, "http": 80}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Credential:
    """One Authorization header value and where it came from; its repr never shows the value."""

    header: str = field(repr=False)
    source: str
    renewable: bool = False  # a helper's answer, which asking again may replace

    def shown(self) -> str:
        return f"Authorization (redacted, from {self.source})"


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url``, lowercased, with the scheme's default port written out."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or DEFAULT_PORTS.get(scheme, 0)
    except ValueError:
        port = 0
    host = (parts.hostname or "").rstrip(".")
    return f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"


def config_path() -> Path:
    """The client's own settings: ``SKILLREG_CLIENT_CONFIG``, else config.toml in the user's config folder."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_config_path("skillreg", appauthor=False) / "config.toml"


def read_helpers(path: Path) -> dict[str, str]:
    """The ``[credential-helpers]`` table of the client config: origin -> command (none when the file is absent)."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the client config ({getattr(exc, 'strerror', None) or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    table = document.get(HELPERS_TABLE, {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [{HELPERS_TABLE}] must be a table of origin = \"command\"")
    helpers = {}
    for key, command in table.items():
        parts = urlsplit(key)
        if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname or parts.path.strip("/") \
                or parts.query or parts.username or not isinstance(command, str) or not command.strip():
            raise UsageError(f"{path}: [{HELPERS_TABLE}] {key!r} must be an origin (https://host or "
                             "https://host:port) set to a command")
        helpers[origin(key)] = command
    return helpers


def authorization_value(text: str, source: str) -> str:
    """A header value from a token (sent as ``Bearer TOKEN``) or a whole value (``Basic ...``, ``Bearer ...``)."""
    value = text.strip()
    scheme, _, rest = value.partition(" ")
    if not value or _UNSAFE.search(value) or (rest and not _SCHEME.fullmatch(scheme)):
        raise ClientError(f"{source} gives an Authorization value (redacted) that is not a token or a header value "
                          f"such as `Bearer TOKEN`; see {GUIDE}")
    return value if rest else f"Bearer {value}"


class Credentials:
    """The credentials one client session sends, looked up once per origin (a helper's for its lifetime).

    ``named``: the registry the user named for this command, which SKILLREG_TOKEN goes to when
    SKILLREG_TOKEN_ORIGIN names none; None for a registry read from a lock."""

    def __init__(self, named: str | None = None) -> None:
        self.named = origin(named) if named and "://" in named else None
        self._found: dict[str, tuple[Credential | None, float]] = {}
        self._lock = threading.Lock()

    def for_url(self, url: str, seconds: float) -> Credential | None:
        """The credential for ``url``'s origin, if any; a helper gets at most ``seconds`` to answer."""
        key = origin(url)
        if urlsplit(url).scheme.lower() not in DEFAULT_PORTS:
            return None
        with self._lock:
            found = self._found.get(key)
            if found is not None and found[1] > time.monotonic():
                return found[0]
            credential, lifetime = self._look_up(key, seconds)
            self._found[key] = (credential, time.monotonic() + lifetime)
            return credential

    def sent(self, url: str) -> Credential | None:
        """The credential last looked up for ``url``'s origin (what a refusal of it concerns), without a lookup."""
        with self._lock:
            found = self._found.get(origin(url))
        return found[0] if found is not None else None

    def renew(self, url: str) -> bool:
        """Forget a helper's answer for ``url``'s origin that the registry refused, so the next request asks the
        helper again; False when there is none (a value from the environment or netrc would not change)."""
        with self._lock:
            found = self._found.get(origin(url))
            if found is None or found[0] is None or not found[0].renewable:
                return False
            del self._found[origin(url)]
            return True

    def authorize(self, request: urllib.request.Request, seconds: float = 30.0) -> None:
        """Add the credential for ``request``'s origin to it, never to be repeated on a redirect."""
        credential = self.for_url(request.full_url, seconds)
        if credential is not None:
            request.add_unredirected_header("Authorization", credential.header)

    def _look_up(self, key: str, seconds: float) -> tuple[Credential | None, float]:
        token = os.environ.get(TOKEN_ENV)
        if token:
            bound = os.environ.get(TOKEN_ORIGIN_ENV)
            if bound and (urlsplit(bound).scheme.lower() not in DEFAULT_PORTS or not urlsplit(bound).hostname):
                raise UsageError(f"{TOKEN_ORIGIN_ENV} must be an origin such as https://skills.example.com, not "
                                 f"{bound!r}")
            if (origin(bound) if bound else self.named) == key:
                return Credential(authorization_value(token, TOKEN_ENV), TOKEN_ENV), float("inf")
        path = config_path()
        command = read_helpers(path).get(key)
        if command is not None:
            return run_helper(command, key, path, seconds)
        return from_netrc(key), float("inf")


def run_helper(command: str, key: str, path: Path, seconds: float) -> tuple[Credential, float]:
    """Run the helper ``path`` names for the origin ``key``: its first line is the token or header value, a
    later ``expires_in=SECONDS`` line how long it may be reused. It gets ``seconds`` (the request's deadline)."""
    source = f"the credential helper for {key} in {path}"
    process = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True,
                               env={**os.environ, "SKILLREG_ORIGIN": key})
    try:
        out, _ = process.communicate(timeout=max(seconds, 0.001))
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise ClientError(f"{source} gave no answer before the request's deadline (SKILLREG_TIMEOUT) passed; "
                          "nothing was sent") from None
    if process.returncode != 0:
        raise ClientError(f"{source} failed with exit code {process.returncode}; nothing was sent")
    lines = [line.strip() for line in out.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        raise ClientError(f"{source} printed nothing; nothing was sent")
    lifetime = HELPER_LIFETIME
    for line in lines[1:]:
        name, _, value = line.partition("=")
        if name.strip() == "expires_in":
            try:
                lifetime = max(float(value), 0.0)
            except ValueError:
                raise ClientError(f"{source} printed `expires_in={value.strip()}`, not a number of seconds") from None
    return Credential(authorization_value(lines[0], source), source, renewable=True), lifetime


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Stop the helper and whatever it started (they share its session), so none keeps the pipe open."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    process.communicate()


def from_netrc(key: str) -> Credential | None:
    """Basic credentials from the netrc file for ``machine host:port`` or, on the scheme's default port,
    ``machine host``; its ``default`` entry is never used (it would go to every host)."""
    import netrc

    explicit = os.environ.get("NETRC")
    path = Path(explicit).expanduser() if explicit else Path.home() / ".netrc"
    if not path.is_file():
        return None
    try:
        # No file given: the standard library checks that the default ~/.netrc is private to its owner.
        table = netrc.netrc(str(path) if explicit else None)
    except netrc.NetrcParseError as exc:
        where = f"{path}: line {exc.lineno}" if exc.lineno else str(path)  # the permission check gives no line
        problem = re.sub(r"(token) '.*'", r"\1 (redacted)", exc.msg)  # the token it quotes may be a password
        raise UsageError(f"{where}: {problem}") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None
    scheme, _, rest = key.partition("://")
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    names = [f"{host}:{port}"] + ([host] if DEFAULT_PORTS.get(scheme) == int(port) else [])
    for name in names:
        if name in table.hosts:
            login, _, password = table.hosts[name]
            pair = f"{login}:{password or ''}".encode()
            return Credential(f"Basic {base64.b64encode(pair).decode('ascii')}", str(path))
    return None


def refusal(url: str, status: int, reason: str, challenge: str | None, sent: Credential | None) -> str:
    """One line for a 401 or 403: the registry needs credentials, refused the ones sent, or says they expired."""
    where = origin(url)
    if sent is None:
        return (f"{url}: the registry needs credentials (HTTP {status} {reason}) and none are set for {where}; "
                f"give them as {GUIDE} says")
    if status == 401 and challenge and re.search(r'error\s*=\s*"?invalid_token', challenge):
        return (f"{url}: the registry says the token sent has expired or was revoked (HTTP 401, invalid_token; "
                f"{sent.shown()}); get a new one, see {GUIDE}")
    what = "refused" if status == 401 else "gives no access to this with"
    return f"{url}: the registry {what} the credentials sent (HTTP {status} {reason}; {sent.shown()}); see {GUIDE}"
