"""After a deploy: does the live registry serve the commit just built?

A deploy that silently failed, or a CDN still holding the old copy, leaves a stale API that looks healthy.
``skillreg check-deploy URL --commit SHA`` polls ``api/v1/index.json`` (with a cache-busting query string,
since GitHub Pages lets caches keep a copy for 10 minutes) until its ``source.commit`` is SHA or time runs out.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin

from .. import __version__
from ..client.credentials import Credentials, refusal
from ..client.documents import MAX_INDEX_BYTES, MAX_INDEX_VALUES, json_shape_problem
from ..core.errors import SkillRegError
from ..core.urls import INDEX_PATH
from ..core.words import counted


class DeployCheckFailed(SkillRegError):
    """The live index never showed the expected commit."""


@dataclass(frozen=True)
class DeployCheck:
    url: str
    commit: str
    attempts: int
    seconds: float


def index_url(site_url: str) -> str:
    return urljoin(site_url.rstrip("/") + "/", INDEX_PATH)


def served_commit(url: str, timeout: float = 10.0, credentials: Credentials | None = None) -> str | None:
    """The ``source.commit`` of the index at ``url``; raises OSError or ValueError when it cannot be read (or is
    larger, or holds more values, than any index a client accepts). ``credentials`` go to ``url``'s origin only."""
    request = urllib.request.Request(url, headers={"Cache-Control": "no-cache", "Pragma": "no-cache",
                                                   "User-Agent": f"skillreg/{__version__} check-deploy"})
    if credentials is not None:
        credentials.authorize(request, timeout)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = response.read(MAX_INDEX_BYTES + 1)
    if len(data) > MAX_INDEX_BYTES:
        raise ValueError(f"it is larger than {MAX_INDEX_BYTES:,} bytes")
    problem = json_shape_problem(data, max_values=MAX_INDEX_VALUES)
    if problem:
        raise ValueError(problem)
    document = json.loads(data)
    source = document.get("source") if isinstance(document, dict) else None
    commit = source.get("commit") if isinstance(source, dict) else None
    if commit is not None and not isinstance(commit, str):
        raise ValueError("`source.commit` is not a string")
    return commit


def check_deploy(site_url: str, commit: str, *, timeout: float = 600.0, interval: float = 15.0,
                 on_attempt: Callable[[int, str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 credentials: Credentials | None = None) -> DeployCheck:
    """Poll until the live index names ``commit``; raise DeployCheckFailed with the last answer when it never does."""
    url = index_url(site_url)
    credentials = credentials or Credentials(site_url)
    start = clock()
    attempt = 0
    while True:
        attempt += 1
        try:
            served = served_commit(f"{url}?commit={commit}&attempt={attempt}", credentials=credentials)
            seen = f"serves commit {served}" if served else "has no source commit"
        except urllib.error.HTTPError as exc:
            served, seen = None, f"answered HTTP {exc.code}"
            if exc.code in (401, 403):  # waiting longer would not help
                raise DeployCheckFailed(refusal(url, exc.code, exc.reason, exc.headers.get("WWW-Authenticate"),
                                                credentials.sent(url))) from None
        except (OSError, ValueError) as exc:
            served, seen = None, f"could not be read ({getattr(exc, 'reason', None) or exc})"
        if served == commit:
            return DeployCheck(url, commit, attempt, clock() - start)
        if on_attempt is not None:
            on_attempt(attempt, seen)
        if clock() - start + interval > timeout:
            raise DeployCheckFailed(f"{url} {seen}, not {commit}, after {counted(attempt, 'attempt')} in "
                                    f"{clock() - start:.0f}s; the deploy did not reach the live site")
        sleep(interval)
