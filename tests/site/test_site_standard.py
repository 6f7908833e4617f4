"""Each skill's page says how it stands to the open standard: that it meets it, or how it departs from it (the
fields outside it and what validation found), with a badge beside the others."""

from __future__ import annotations

from pathlib import Path

from helpers import write_tree

from builder.core.config import load_config
from builder.publish.build import build


def test_a_skill_page_shows_whether_the_skill_meets_the_standard_and_its_departures(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "registry.yaml": "title: T\nbase_url: https://example.org/r/\nprofile: agents\n",
        "skills/plain-words/SKILL.md": "---\nname: plain-words\ndescription: Only instructions, used in tests.\n"
                                       "---\n# Plain\n\nJust words.\n",
        "skills/for-claude/SKILL.md": "---\nname: for-claude\ndescription: Runs in Claude Code.\nmodel: haiku\n"
                                      "metadata:\n  tags: [a, b]\n---\n# Claude\n\nRun <it>.\n",
        "skills/Odd_Name/SKILL.md": "---\nname: Odd_Name\ndescription: A name that is no slug.\n---\nWords.\n",
    })
    build(load_config(tmp_path / "registry.yaml"), tmp_path / "out")
    plain = (tmp_path / "out/skills/plain-words/index.html").read_text(encoding="utf-8")
    section = plain[plain.index('<h2 id="standard">'):]
    assert "It meets the open" in section and "sr-findings" not in section
    assert "outside the standard</a>" not in plain
    claude = (tmp_path / "out/skills/for-claude/index.html").read_text(encoding="utf-8")
    assert '<a class="sr-badge sr-badge--warn" href="#standard">outside the standard</a>' in claude
    section = claude[claude.index('<h2 id="standard">'):]
    assert "It departs from the open" in section and "fields the standard does not define: <code>model</code>" \
        in section
    assert ("<li><code>SK113</code> <code>SKILL.md:6</code> `metadata.tags` must be a string, got a list "
            '<span class="sr-badge sr-badge--warn">standard</span></li>') in section
    assert "<code>SK013</code> <code>SKILL.md:6</code> the frontmatter uses a flow-style list `[...]`" in section
    assert "Name in SKILL.md" not in plain
    odd = (tmp_path / "out/skills/odd-name/index.html").read_text(encoding="utf-8")  # its derived slug
    panel = odd[odd.index('<aside class="sr-panel"'):odd.index("</aside>")]
    assert "Name in SKILL.md</dt><dd><code>Odd_Name</code></dd>" in panel
