"""What ``skillreg init`` reads from git: the repository's top folder, its ``origin`` remote (the repository's
web address and, on GitHub, where Pages serves it) and the branch the Pages workflow deploys."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..core.errors import UsageError
from ..core.git import git_text

# github.com in the forms `git remote -v` shows: https (credentials and a port allowed), scp-like ssh and ssh://.
_GITHUB = re.compile(
    r"""^(?:
        (?:https?|git|ssh)://(?:[^@/]+@)?github\.com(?::\d+)?/   # https://[user[:token]@]github.com/, ssh://git@...
      | [^@/:]+@github\.com:                                    # git@github.com:
    )
    (?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/(?P<name>[A-Za-z0-9._-]+?)(?:\.git)?/?$""", re.VERBOSE)


@dataclass(frozen=True)
class Origin:
    """The ``origin`` remote as the registry publishes it: ``repository`` (a web address without credentials,
    or "" when there is none to show) and ``base_url`` (GitHub Pages' address, "" when it cannot be known)."""

    url: str  # as git has it, credentials removed
    repository: str
    base_url: str
    owner: str = ""
    name: str = ""

    @property
    def on_github(self) -> bool:
        return bool(self.owner)


def parse_origin(url: str) -> Origin:
    """The web address and Pages address of a remote URL. github.com (https or ssh) gives both: a project site
    ``https://OWNER.github.io/REPO/``, or the user site ``https://OWNER.github.io/`` for a repository named so.
    Another https host gives its address without credentials; anything else (a path, another ssh host) neither."""
    url = url.strip()
    match = _GITHUB.match(url)
    if match:
        owner, name = match["owner"], match["name"]
        host = f"{owner.lower()}.github.io"
        base_url = f"https://{host}/" if name.lower() == host else f"https://{host}/{name}/"
        return Origin(_without_credentials(url), f"https://github.com/{owner}/{name}", base_url, owner, name)
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.hostname:
        clean = _without_credentials(url)
        path = parts.path.rstrip("/").removesuffix(".git")
        port = f":{parts.port}" if parts.port else ""
        return Origin(clean, f"{parts.scheme}://{parts.hostname}{port}{path}", "")
    return Origin(_without_credentials(url), "", "")


def _without_credentials(url: str) -> str:
    """``url`` without a password or token before its host (an ssh user such as ``git@`` stays)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and "@" in parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        return parts._replace(netloc=host).geturl()
    return url


@dataclass(frozen=True)
class Repository:
    """The git repository ``init`` adopts: its top folder, ``origin`` (None without one) and deployed branch."""

    root: Path
    origin: Origin | None
    branch: str


def read_repository(start: Path) -> Repository:
    """The repository holding ``start``; a UsageError outside one (or without git)."""
    top = git_text(["rev-parse", "--show-toplevel"], start)
    if not top or not top.strip():
        raise UsageError(f"{start} is not in a git repository; `skillreg init` adopts a git repository of skills "
                         "(run `git init` first, or run it in your repository's checkout)")
    root = Path(top.strip())
    remote = git_text(["config", "--get", "remote.origin.url"], root)
    origin = parse_origin(remote) if remote and remote.strip() else None
    return Repository(root, origin, _deployed_branch(root))


def _deployed_branch(root: Path) -> str:
    """The branch the Pages workflow builds: origin's default branch, else the one checked out, else main."""
    head = git_text(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], root)
    if head and head.strip().startswith("origin/"):
        return head.strip().removeprefix("origin/")
    current = git_text(["symbolic-ref", "--quiet", "--short", "HEAD"], root)
    return current.strip() if current and current.strip() else "main"
