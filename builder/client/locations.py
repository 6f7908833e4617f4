"""Where a registry is and which paths in it the client may use: the location a user typed or a lock names,
and the skill names and site paths that published documents give."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..core.errors import ClientError, UsageError
from ..core.loader import path_problems
from ..core.model import MAX_NAME
from ..core.urls import INDEX_PATH
from .documents import NAME
from .lock_format import LOCK_FILE
from .reach import host_kind, literal_address


def require_skill_name(name: str) -> str:
    """``name`` when it is one a registry can publish; a UsageError naming it otherwise (a name from the user)."""
    if not (isinstance(name, str) and 0 < len(name) <= MAX_NAME and NAME.match(name)):
        raise UsageError(f"{name!r} is not a skill name (lowercase letters, digits and single hyphens)")
    return name


def check_site_path(path: object, what: str) -> str:
    """A path from a published document: relative, inside the site, no tricks."""
    if not isinstance(path, str) or not path or "\\" in path or path_problems(path) or \
            any(part in ("", ".") for part in path.split("/")):
        raise ClientError(f"the registry published an unsafe {what} path {path!r}; refusing it")
    return path


def normalize_location(location: str) -> tuple[str, Path | None]:
    """(registry root URL ending in '/', local folder or None) for what a user typed."""
    text = location.strip()
    for suffix in (INDEX_PATH, "index.json"):
        if text.endswith("/" + suffix):
            text = text[: -len(suffix)]
            break
    if "://" not in text:
        folder = Path(text).expanduser().resolve()
        return folder.as_uri().rstrip("/") + "/", folder
    parts = urlsplit(text)
    if parts.username is not None or parts.password is not None:
        from .credentials import GUIDE

        shown = f"{parts.scheme}://redacted@{parts.netloc.rpartition('@')[2]}{parts.path}"
        raise UsageError(f"{shown}: a registry URL carries no user name or password (the lock would keep them); "
                         f"give credentials as {GUIDE} says")
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise UsageError(f"{location}: only local file:// URLs are supported")
        folder = Path(unquote(parts.path)).resolve()
        return folder.as_uri().rstrip("/") + "/", folder
    if scheme not in ("http", "https"):
        raise UsageError(f"{location}: the registry must be an https:// URL, a file:// URL or a folder")
    if scheme == "http" and host_kind(parts.hostname or "") != "loopback":
        raise UsageError(f"{location}: plain http:// is allowed only for 127.0.0.1 and localhost; use https://")
    if parts.query or parts.fragment:
        raise UsageError(f"{location}: a registry URL has no query or fragment")
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return f"{scheme}://{parts.netloc}{path}", None


# A host name or address, with an optional port and path: what a URL without its scheme starts with.
_HOST_LIKE = re.compile(r"(localhost|[a-z0-9-]+(\.[a-z0-9-]+)+|\[[0-9a-f:.]+\])(:\d{1,5})?(/\S*)?", re.IGNORECASE)


def url_meant(typed: str) -> str | None:
    """The URL someone most likely meant by ``typed`` when it reads as a host without a scheme
    (``127.0.0.1:8100`` -> ``http://127.0.0.1:8100``), else None. http:// only where the client allows it."""
    if not _HOST_LIKE.fullmatch(typed.strip()):
        return None
    host = urlsplit("//" + typed.strip()).hostname or ""
    return f"{'http' if host_kind(host) == 'loopback' else 'https'}://{typed.strip()}"


def no_registry_here(folder: Path, typed: str = "") -> str:
    """Why a folder given as the registry is not one, and what to give instead: a registry's checkout holds
    registry.yaml and, once built, its site/ (the default output); ``typed``, what the user wrote, may have been
    a URL without its scheme."""
    from ..core.loader import display_path

    shown = display_path(folder)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        meant = url_meant(typed) if not folder.exists() else None
        if meant is not None:
            return f"{shown} {what}; did you mean --registry {meant}? (a URL needs its http:// or https://)"
        return f"{shown} {what}; --registry takes a registry's URL or the folder its build wrote"
    missing = f"{shown} holds no published registry (no {INDEX_PATH})"
    if (folder / "registry.yaml").is_file():
        if (folder / "site" / INDEX_PATH).is_file():
            return f"{missing}; it is a registry's checkout, whose build is in site/: --registry {shown}/site"
        return (f"{missing}; it is a registry's checkout that was never built: run `skillreg build` there, "
                f"then use --registry {shown}/site")
    return f"{missing}; --registry takes a registry's URL or the folder its build wrote"


def check_lock_registry(url: str) -> str:
    """``url``, a registry read from a lock file, if the client may use it unasked: a lock is data from the
    checkout, so one naming this machine, a local network or a folder would make a clone send requests there.
    Refused here by what the host spells, however it spells it; a name is judged by the addresses it resolves to
    when connecting (``Registry(..., public_only=True)``)."""
    try:
        root, folder = normalize_location(url)
    except UsageError as exc:
        raise ClientError(f"{LOCK_FILE} names the registry {url!r}, which is not usable ({exc})") from None
    host = urlsplit(root).hostname or ""
    kind = "a folder" if folder is not None else host_kind(host)
    where = {"a folder": "a folder on this machine", "loopback": "on this machine",
             "private": "on a local network"}.get(kind)
    if where is not None:
        address = literal_address(host.rstrip(".")) if folder is None else None
        if address is not None and str(address) != host:
            where = f"the address {address}, {where}"
        raise ClientError(f"{LOCK_FILE} names the registry {url}, {where}; a registry from a lock file is used only "
                          f"when it is public. To use it, name it: --registry {url}")
    return url
