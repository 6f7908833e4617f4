"""The two workflows ``skillreg init`` writes into an adopted repository: short, pinned to commits, and calling
this project's composite action (``action.yml`` at its root) for the steps, so that updating one means changing
one commit.

The action is pinned to the commit of the skillreg that runs ``init`` when that is known (a git checkout of this
project, or pip's record of an install from git); otherwise the workflows name ``UNPINNED``, which GitHub
refuses until the user puts a commit there (``init`` says so). There are no release tags yet.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .. import __version__
from ..core.git import git_text

PROJECT_REPOSITORY = "skill-registry/skill-registry"  # this project on GitHub: the action's `uses:` name
DISTRIBUTION = "skill-registry"
UNPINNED = "SET-TO-A-COMMIT-OF-skill-registry"
VALIDATE_WORKFLOW = ".github/workflows/skillreg-validate.yml"
PAGES_WORKFLOW = ".github/workflows/skillreg-pages.yml"
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")

# The actions the workflows use besides ours, pinned as this repository's own workflows pin them (a test keeps the
# two equal): the full commit, and the release it is.
CHECKOUT = "actions/checkout@de0fac2e4500dabe0009e67214ff5f5447ce83dd # v6.0.2"
CONFIGURE_PAGES = "actions/configure-pages@45bfe0192ca1faeb007ade9deae92b16b8254a0d # v6.0.0"
UPLOAD_PAGES_ARTIFACT = "actions/upload-pages-artifact@fc324d3547104276b827a68afc52ff2a11cc49c9 # v5.0.0"
DEPLOY_PAGES = "actions/deploy-pages@368f82528645a54fb793d4d04e342629a3f51346 # v5.0.1"


def is_commit(ref: str) -> bool:
    """A full commit id (SHA-1, or SHA-256 for repositories that use it), as GitHub pins need."""
    return bool(_COMMIT.fullmatch(ref))


def installed_commit() -> str | None:
    """The commit of this project that the running skillreg comes from: the checkout that holds the package (an
    editable install or a source tree), else the commit pip recorded for an install from git; None when neither
    says (a wheel or an sdist)."""
    source = Path(__file__).resolve().parents[2]
    top = git_text(["rev-parse", "--show-toplevel"], source)
    if top and Path(top.strip()).resolve() == source and (source / "action.yml").is_file():
        head = (git_text(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], source) or "").strip()
        if is_commit(head):
            return head
    try:
        recorded = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        commit = json.loads(recorded or "{}").get("vcs_info", {}).get("commit_id", "")
    except (ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) and is_commit(commit) else None


@dataclass(frozen=True)
class Workflows:
    """The workflow files' texts by path in the repository, and the action reference they use."""

    action: str  # e.g. skill-registry/skill-registry@<commit>
    files: dict[str, str]


def workflows(ref: str, branch: str) -> Workflows:
    """The pull-request and Pages workflows calling the action at ``ref``; Pages deploys pushes to ``branch``."""
    action = f"{PROJECT_REPOSITORY}@{ref}"
    uses = f"{action} # skillreg {__version__}" if is_commit(ref) else f"{action} # set a commit: see the top"
    pin_note = "" if is_commit(ref) else _UNPINNED_NOTE
    fill = {"@USES@": uses, "@CHECKOUT@": CHECKOUT, "@BRANCH@": json.dumps(branch), "@PIN_NOTE@": pin_note,
            "@CONFIGURE_PAGES@": CONFIGURE_PAGES, "@UPLOAD@": UPLOAD_PAGES_ARTIFACT, "@DEPLOY@": DEPLOY_PAGES}
    texts = {}
    for path, template in ((VALIDATE_WORKFLOW, _VALIDATE), (PAGES_WORKFLOW, _PAGES)):
        for marker, value in fill.items():
            template = template.replace(marker, value)
        texts[path] = template
    return Workflows(action, texts)


_UNPINNED_NOTE = f"""\
# NOT PINNED YET: replace {UNPINNED} below with a full commit id of {PROJECT_REPOSITORY}
# (`skillreg init` could not tell which commit the skillreg it ran comes from).
"""

_VALIDATE = """\
# Written by `skillreg init`. Checks the skills a pull request adds or changes against the registry's profile
# and its baseline of known findings; each finding becomes an annotation on its line and the job summary lists
# them. The steps live in skill-registry's action, pinned to one commit: to update, change that commit.
@PIN_NOTE@name: Validate skills

on:
  pull_request:

permissions:
  contents: read

jobs:
  validate:
    runs-on: ubuntu-latest
    timeout-minutes: 20
    steps:
      - name: Check out with full history, so the base branch and the merge base exist
        uses: @CHECKOUT@
        with:
          fetch-depth: 0
          persist-credentials: false

      - name: Validate the changed skills
        uses: @USES@
        with:
          command: validate
          base-ref: origin/${{ github.base_ref }}
"""

_PAGES = """\
# Written by `skillreg init`. Builds the registry (website, JSON API, bundles) on every push to the branch below
# and deploys it to GitHub Pages: set Settings -> Pages -> Source to "GitHub Actions" once. The steps live in
# skill-registry's action, pinned to one commit: to update, change that commit.
# To sign the registry (see "Signing a registry" in skill-registry's documentation): keep the secret
# SKILLREG_SIGNING_KEYS in an environment named `signing` that only the deployed branch may use, add
# `environment: signing` to the build job, and `signing-keys: ${{ secrets.SKILLREG_SIGNING_KEYS }}` under the
# action's `with:`.
@PIN_NOTE@name: Deploy the skill registry

on:
  push:
    branches: [@BRANCH@]
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: pages
  cancel-in-progress: false

jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - name: Check out with full history (every published version and its dates come from git)
        uses: @CHECKOUT@
        with:
          fetch-depth: 0
          persist-credentials: false

      - name: Read the Pages URL
        id: pages
        uses: @CONFIGURE_PAGES@

      - name: Build the registry with the Pages URL
        uses: @USES@
        with:
          command: build
          base-url: ${{ steps.pages.outputs.base_url }}/
          out: site

      - name: Upload the Pages artifact
        uses: @UPLOAD@
        with:
          path: site/
          include-hidden-files: true # .well-known/ holds the skills discovery indexes

  deploy:
    needs: build
    runs-on: ubuntu-latest
    timeout-minutes: 10
    permissions:
      pages: write
      id-token: write
    environment:
      name: github-pages
      url: ${{ steps.deployment.outputs.page_url }}
    steps:
      - name: Deploy to GitHub Pages
        id: deployment
        uses: @DEPLOY@
"""
