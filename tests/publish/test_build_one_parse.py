"""A build reads each SKILL.md once: the worker that validates a skill finds its links, chooses its raw files by
them and renders its page's body; the website's page workers take that rendering and parse no SKILL.md.

The builds here are small enough to run every worker in the test's own process (below the size at which the
build starts worker processes), so counting calls of the parser's entry points sees every one of them."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.build import SKILLS, all_files, git, make_registry

from builder.core import cmark, markdown
from builder.core.config import load_config
from builder.core.frontmatter import parse_skill_md
from builder.core.workers import PARALLEL_THRESHOLD
from builder.publish.build import BuildOptions, build
from builder.site.bodies import BODIES_STATE
from builder.site.pages import write_site

LEAN = "publish:\n  raw_files: linked\n  json_bundles: false\n  well_known_skills: false\n  page_body: fetched\n"
LINK_FINDERS = ("links", "links_and_hidden", "links_full")


class ParseCounter:
    """Calls of every entry point that parses SKILL.md or its body, by the text each was given, wherever in the
    package the entry point is bound (``from ... import`` copies a name into each module that imports it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.frontmatter: Counter[bytes] = Counter()
        self.links: Counter[str] = Counter()
        self.renders: Counter[str] = Counter()
        originals: dict[str, tuple[Callable[..., Any], Counter[Any]]] = {
            "parse_skill_md": (parse_skill_md, self.frontmatter),
            **{name: (getattr(markdown, name), self.links) for name in LINK_FINDERS}}
        for module in [m for name, m in sys.modules.items() if name.startswith("builder") and m is not None]:
            for name, (original, counter) in originals.items():
                if getattr(module, name, None) is original:
                    monkeypatch.setattr(module, name, self._counting(original, counter))
        monkeypatch.setattr(cmark, "render_html", self._counting(cmark.render_html, self.renders))

    @staticmethod
    def _counting(original: Callable[..., Any], counter: Counter[Any]) -> Callable[..., Any]:
        def counted(text: Any, *args: Any, **kwargs: Any) -> Any:
            counter[text] += 1
            return original(text, *args, **kwargs)

        return counted


def registry(root: Path, publish: str) -> Path:
    make_registry(root, SKILLS, commit=False)
    if publish:
        with (root / "registry.yaml").open("a", encoding="utf-8") as file:
            file.write(publish)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def bodies_of(root: Path) -> dict[str, str]:
    """Each skill's SKILL.md bytes' body, as the loader reads it."""
    config = load_config(root / "registry.yaml")
    found = {}
    for name in SKILLS:
        parsed = parse_skill_md((root / "skills" / name / "SKILL.md").read_bytes(), "SKILL.md",
                                max_frontmatter_bytes=config.limits.max_frontmatter_bytes)
        found[name] = parsed.body
    return found


def renderings(home: Path) -> list[str]:
    folders = list((home / ".local/state/skillreg/builds").glob(f"*/{BODIES_STATE}"))
    assert len(folders) == 1
    return sorted(p.name for p in folders[0].iterdir())


@pytest.fixture(params=["default", "lean"])
def publish(request: pytest.FixtureRequest) -> Iterator[str]:
    yield "" if request.param == "default" else LEAN


def test_a_build_parses_each_skill_md_and_its_body_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         publish: str) -> None:
    assert len(SKILLS) < PARALLEL_THRESHOLD  # every worker runs in this process, where the counter sees it
    root = registry(tmp_path / "registry", publish)
    bodies = bodies_of(root)
    counter = ParseCounter(monkeypatch)
    build(load_config(root / "registry.yaml"), tmp_path / "out", BuildOptions(jobs=1))
    for name in SKILLS:
        data = (root / "skills" / name / "SKILL.md").read_bytes()
        body = bodies[name]
        assert "](" in body or "<" in body  # the link finder has something to read
        assert (counter.frontmatter[data], counter.links[body], counter.renders[body]) == (1, 1, 1), name
    assert (tmp_path / "out/skills/csv-profiler/index.html").is_file()


def test_a_rebuild_renders_only_the_body_that_changed_and_keeps_one_rendering_a_skill(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_user_dirs: Path) -> None:
    root = registry(tmp_path / "registry", LEAN)
    config = load_config(root / "registry.yaml")
    build(config, tmp_path / "out", BuildOptions(jobs=1))
    first = renderings(isolated_user_dirs)
    assert len(first) == len(SKILLS)
    skill_md = root / "skills/csv-profiler/SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\nOne more line, [a link](SKILL.md).\n",
                        encoding="utf-8")
    counter = ParseCounter(monkeypatch)
    build(config, tmp_path / "out", BuildOptions(jobs=1))
    assert list(counter.renders.values()) == [1]
    assert "One more line" in next(iter(counter.renders))
    second = renderings(isolated_user_dirs)
    assert len(second) == len(SKILLS)
    assert [n for n in first if n not in second] == [n for n in first if n.startswith("csv-profiler.")]
    # The rebuilt output reads exactly as a build from scratch of the same tree.
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / "fresh-state"))
    build(config, tmp_path / "cold", BuildOptions(jobs=1))
    assert all_files(tmp_path / "out") == all_files(tmp_path / "cold")


@pytest.mark.parametrize("state", ["none", "damaged", "extended"])
def test_pages_from_stored_renderings_equal_pages_rendered_from_skill_md(tmp_path: Path, publish: str, state: str,
                                                                         isolated_user_dirs: Path) -> None:
    """The page workers render SKILL.md themselves only where the state holds no rendering they can read (no
    state folder, a file cut short or one with bytes after its gzip member); both ways give the same bytes."""
    root = registry(tmp_path / "registry", publish)
    config = load_config(root / "registry.yaml")
    build(config, tmp_path / "out", BuildOptions(jobs=1))
    folder = next((isolated_user_dirs / ".local/state/skillreg/builds").glob(f"*/{BODIES_STATE}"))
    for rendering in folder.iterdir():
        data = rendering.read_bytes()
        # damaged: the gzip trailer (CRC, length) and a byte more cut off; extended: bytes after the member
        rendering.write_bytes(data[:-9] if state == "damaged" else data + b"\x1f\x8b more")
    again = tmp_path / "again"
    os.mkdir(again)
    for rel in ("api", ".well-known"):
        if (tmp_path / "out" / rel).exists():
            os.symlink(tmp_path / "out" / rel, again / rel)
    write_site(config, again, jobs=1, state=folder.parent if state != "none" else None)
    pages = {rel: data for rel, data in all_files(tmp_path / "out").items() if rel.startswith("skills/")}
    assert pages and pages == {rel: data for rel, data in all_files(again).items() if rel.startswith("skills/")}
    if state != "none":
        assert not list(folder.iterdir())  # no page read them: removed
