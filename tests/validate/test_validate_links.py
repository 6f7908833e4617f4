"""Links in SKILL.md bodies are read by a CommonMark parser (builder.core.markdown) as the website's renderer,
cmark-gfm, reads them.

The fast path (``links``, which parses only the stretches of a body that can hold a link) must give exactly the
list a whole-body parse (``links_full``) gives: on every fixture, on a generated real-shaped corpus, on bodies
made to trip the stretch cutter and on random line mixes. The website must see the same destinations.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers import REPO, write_tree
from selectolax.lexbor import LexborHTMLParser

from builder.core.config import load_config
from builder.core.frontmatter import parse_skill_md
from builder.core.markdown import links, links_and_hidden, links_full
from builder.site.render import BodyRenderer
from builder.validate.body import MAX_BODY_BRACKETS
from builder.validate.run import validate_paths

if str(REPO) not in sys.path:  # bench/ is a folder of the repository, not part of the installed package
    sys.path.insert(0, str(REPO))

from bench.corpus import generate  # noqa: E402
from bench.links import differences  # noqa: E402

FIXTURES = REPO / "tests" / "validate" / "fixtures"
FRONTMATTER = "---\nname: {name}\ndescription: Checks links. Use when testing skillreg validate.\n---\n"


def findings(tmp_path: Path, body: str, files: dict[str, str] | None = None) -> list[str]:
    """``validate_paths`` on one skill made of ``body`` and ``files``: its findings as `line:column code message`."""
    tree = {"skills/links/SKILL.md": FRONTMATTER.format(name="links") + body}
    tree.update({f"skills/links/{path}": text for path, text in (files or {}).items()})
    write_tree(tmp_path, {"registry.yaml": "title: Links\n", **tree})
    report = validate_paths([tmp_path / "skills"], load_config(tmp_path / "registry.yaml"), "spec", jobs=1)
    return [f"{d.line}:{d.column} {d.code} {d.message}" for d in report.diagnostics]


# --- links in parentheses, footnotes, fenced code and backslashed paths, each with a neighbouring variant ---------

@pytest.mark.parametrize(("body", "files", "expected"), [
    ("See [the notes](docs/notes(v2).md).\n", {"docs/notes(v2).md": "x\n"}, []),
    ("See [the notes](docs/notes(v2).md).\n", {}, ["5:5 SK404 link target `docs/notes(v2).md` does not exist in the skill"]),
    ("See [nested](docs/a(b(c)d)e.md).\n", {"docs/a(b(c)d)e.md": "x\n"}, []),
    ("Themes[^1].\n\n[^1]: Switching themes is easy.\n", {}, []),
    ("Themes[^note].\n\n[^note]: Switching [themes](themes.md) is easy.\n", {},
     ["7:20 SK404 link target `themes.md` does not exist in the skill"]),
    ("# Changelog\n\n```md\n## [1.0.0](changes/1.0.0.md)\n```\n\n```\n[x](y.md)\n```\n", {}, []),
    ("```md\n[in](in.md)\n```\n[out](out.md)\n", {}, ["8:1 SK404 link target `out.md` does not exist in the skill"]),
    ("~~~markdown\n[in](in.md)\n~~~\n````md\n```\n[in](in.md)\n````\n", {}, []),
    ("Read [x](..\\..\\01-foundations\\x.md).\n", {},
     ["5:6 SK404 link target `..\\..\\01-foundations\\x.md` does not exist in the skill"]),
    ("Read [x](../01-foundations/x.md).\n", {}, ["5:6 SK405 link `../01-foundations/x.md` leaves the skill folder"]),
    ("Read [x](<../a b.md>).\n", {}, ["5:6 SK405 link `../a b.md` leaves the skill folder"]),
])
def test_links_are_read_as_commonmark_reads_them(tmp_path: Path, body: str, files: dict[str, str],
                                                 expected: list[str]) -> None:
    assert findings(tmp_path, body, files) == expected


def test_a_backslash_path_gets_a_hint_about_separators(tmp_path: Path) -> None:
    write_tree(tmp_path, {"registry.yaml": "title: Links\n",
                          "skills/links/SKILL.md": FRONTMATTER.format(name="links") + "[x](refs\\a.md)\n",
                          "skills/links/refs/a.md": "x\n"})
    report = validate_paths([tmp_path / "skills"], load_config(tmp_path / "registry.yaml"), "spec", jobs=1)
    (finding,) = report.diagnostics
    assert (finding.code, finding.hint) == ("SK404", "Write `/` between folders: a backslash is not a path "
                                                     "separator in a link.")


def test_links_reads_every_form_with_its_file_position() -> None:
    body = ("[a](b.md) ![i](<c d.png> 'title')\n"
            "x [ref][r] and [r] and <https://e.org> and <a@b.org>\n"
            "\n"
            "> quoted [q](q.md)\n"
            "> <a href=\"h.md\">h</a>\n"
            "\n"
            "| col |\n| --- |\n| [t](t.md) |\n"
            "\n"
            "[r]:\n  <r.md>\n")
    got = [(link.line, link.column, link.text, link.kind) for link in links(body)]
    assert got == [(1, 1, "b.md", "link"), (1, 11, "c d.png", "image"), (2, 24, "https://e.org", "autolink"),
                   (2, 44, "mailto:a@b.org", "autolink"), (4, 10, "q.md", "link"), (5, 3, "h.md", "link"),
                   (9, 3, "t.md", "link"), (12, 3, "r.md", "reference")]


@pytest.mark.parametrize(("line", "expected"), [
    ("[a](b.md)", [("b.md", 1)]),
    ("x ![a](<b c.png> 'title') y", [("b c.png", 3)]),
    ("[a [b] c](d.md)", [("d.md", 1)]),
    ("[x [a](b.md) y](c.md)", [("b.md", 4)]),  # a link holds no link: the inner one wins
    ("[a](b.md \"t\") and [c](d.md (t))", [("b.md", 1), ("d.md", 19)]),
    ("[a](b.md 'unclosed", []),
    ("[a](", []),
    ("![a](" * 3 + "x.png)", [("x.png", 11)]),
    ("`[a](b.md)` [c](d.md)", [("d.md", 13)]),
    ("\\[a](b.md)", []),
    ("[a](javascript:alert(1))", []),  # not a link to CommonMark's safe-URL check: plain text
])
def test_inline_links(line: str, expected: list[tuple[str, int]]) -> None:
    assert [(link.text, link.column) for link in links(line)] == expected


# --- the fast path gives what a whole parse gives ---------------------------------------------------------------

TRICKY = [
    # Fences indented under list items, closed or cut off by the end of the item.
    "1. Step\n\n   ```bash\n   [in](a.md)\n   ```\n\n2. Next [b](b.md)\n",
    "- item\n  ```\n  code\n\n[x](x.md)\n```\n[in](in.md)\n\ntext\n```\n[out](out.md)\n",
    "- a\n\n  ```\n  code\n\nb\n\n```\n[x](missing.md)\n```\n",
    "- a\n   ```\n   [x](x.md)\n\nafter [y](y.md)\n",
    "> ```\n> [q](q.md)\n```\n[in](in.md)\n\nfoo\n```\n[out](out.md)\n",
    # HTML blocks of every type, some around fences.
    "<div>\n```\n</div>\n\n[x](x.md)\n```\n\n[in](in.md)\n",
    "text\n<span>\n```\n[x](x.md)\n\nfoo\n```\n[y](y.md)\n",
    "<!--\n[hidden](h.md)\n\n-->\n[shown](s.md)\n",
    "<pre>\n\n[pre](p.md)\n\n</pre>\n\n[after](a.md)\n",
    "<script>\n\n[s](s.md)\n</script>\n[t](t.md)\n",
    "<?php\n\n[p](p.md) ?>\n\n[q](q.md)\n",
    "<!DOCTYPE x\n\n[d](d.md)>\n\n[e](e.md)\n",
    "<![CDATA[\n\n[c](c.md)\n]]>\n\n[e](e.md)\n",
    "- a\n  <!--\n```\n-->\n\nfoo [x](y.md)\n```\n",
    '<a href="x.md">\n\n<img src="y.png">\n',
    # Fences that are not fences, unclosed fences, longer closers, tabs.
    "```a`b\n[x](x.md)\n```\n\n[y](y.md)\n",
    "````\n```\n\n[in](in.md)\n````\n\n[out](out.md)\n",
    "```\n\n[never](closed.md)\n",
    "\t```\n[x](x.md)\n\n[y](y.md)\n",
    "   ```\n[in](in.md)\n   ```\n\n[out](out.md)\n",
    "    ```\n[x](x.md)\n\n[y](y.md)\n",
    # Link hints inside fenced code only (the stretch is not parsed), or next to it.
    "Intro\n```html\n<a href=\"x.md\">x</a>\n\n<img src=\"y.png\">\n```\n\nEnd\n",
    "```java\nList<String> xs;\n```\nAfter [a](a.md)\n",
    "- item\n```\n[c](c.md)\n```\n- [d](d.md)\n",
    "~~~\n[t](t.md)\n~~~~\n\n```\n<b>\n",
    "```a`b\n[x](x.md)\n\n```\n<i>\n```\n",
    "> quote\n```\n[q](q.md)\n```\n",
    # References and footnotes across stretches, in both orders.
    "[a][r]\n\n[r]: r.md\n",
    "[r]: r.md\n\n[a][r] and [b][missing](m.md)\n",
    "[x][y](z.md)\n\n[y]: y.md\n",
    "[^1](x.md)\n\n[^1]: note\n",
    "[^1](x.md)\n",
    "[r]: first.md\n\n[r]: second.md\n\n[r]\n",
    "[multi\nline]: m.md\n\n[multi line]\n",
    "[r]:\n\n[x](x.md)\n",
    # Containers, tables, setext headings, CRLF and NUL.
    "| a |\n| - |\n| [t](t.md) |\n```\n[c](c.md)\n```\n",
    "Title [h](h.md)\n===\n\n* [b](b.md)\n    * [c](c.md)\n",
    "> a\n>\n> [q](q.md)\n\n>  - [n](n.md)\n",
    "line\r\n\r\n[x](x.md)\r\n```\r\n[y](y.md)\r\n```\r\n",
    "a\0b [x](x\0.md)\n",
    "[^1]: a\n\n    ```\n    [in](in.md)\n\n```\n[x](x.md)\n```\n",
    # Block starts on the first line and closers on the last, without a line break after them.
    "```\n[x](x.md)\n```",
    "text\n\n```\n[x](x.md)\n```",
    "- [a](a.md)\n  ```\n[b](b.md)\n  ```\n\n```\n[c](c.md)",
    "<div>\n\n[x](x.md)\n<pre>\n[y](y.md)\n</pre>",
    "1) [a](a.md)\n\n> ```\n[b](b.md)",
    # Paragraphs of plain lines (read without the block parser) and their neighbours that are not plain.
    "Plain [a](a.md)  \nsecond line [b](b.md)\t \n  \n\t\n\nNext [c](c.md)",
    "Para [a](a.md)\nTitle [t](t.md)\n---\n",
    "Head | er [x](x.md)\n--- | ---\nCell [y](y.md) | z\n",
    "One [a](a.md)\n\nTwo\n  indented [b](b.md)\n\n    code [c](c.md)\n",
    "Word [a](a.md)\n[r]: r.md\n\nUse [r]\n",
    "- One [a](a.md)  \n- Two [b](b.md)\t\n\n- Three [c](c.md)\n  more [d](d.md)\n",
    "- A [a](a.md)\n-  B [b](b.md)\n- ---\n* C [c](c.md)\n- D\nlazy [d](d.md)\n",
    "- A [a](a.md)\n  - B [b](b.md)\n- C\n\n  [e](e.md)\n",
    # Inline text with brackets but no `](` or `<`: checkboxes, reference uses, footnote references.
    "- [ ] task [a](a.md)\n- [x] done\n\n[ref][r] and [^1] and [r]\n\n[r]: r.md\n[^1]: note [n](n.md)\n",
    "[a]\n(b.md) [c] (d.md) [e]  \n(f.md)\n",
]


def fixture_bodies() -> list[tuple[str, str]]:
    bodies = []
    for path in sorted(FIXTURES.rglob("*.md")):
        data = path.read_bytes()
        parsed = parse_skill_md(data, path.name, max_frontmatter_bytes=1 << 20) if path.name == "SKILL.md" else None
        text = parsed.body if parsed is not None and parsed.frontmatter is not None else data.decode("utf-8", "replace")
        bodies.append((str(path.relative_to(FIXTURES)), text))
    return bodies


@pytest.mark.parametrize("body", TRICKY)
def test_the_fast_path_equals_a_full_parse_on_tricky_bodies(body: str) -> None:
    assert links(body) == links_full(body)


def test_the_fast_path_equals_a_full_parse_on_every_fixture() -> None:
    bodies = fixture_bodies()
    assert len(bodies) > 60
    for name, body in bodies:
        assert links(body) == links_full(body), name


def test_the_fast_path_equals_a_full_parse_on_a_real_shaped_corpus(tmp_path: Path) -> None:
    folders = generate(tmp_path / "skills", 300, seed=7, shape="real")
    count = 0
    for folder in folders:
        body = (folder / "SKILL.md").read_text(encoding="utf-8").split("\n---\n", 1)[1]
        full = links_full(body)
        assert links(body) == full, folder.name
        count += len(full)
    assert count > 600  # the corpus really holds links (3.2 per file on average)


LINES = ["", "", "", "text [a](a.md)", "- item", "- item [l](l.md)", "Plain words", "  - sub [b](b.md)", "1. step", "   ```", "```", "```md", "~~~",
         "    indented [c](c.md)", "> quote [q](q.md)", "> ```", "<div>", "</div>", "<!--", "-->", "<pre>", "</pre>",
         "[r]: r.md", "[r]", "[^1]: note [n](n.md)", "[^1]", "| a | b |", "| - | - |", "===", "\t```", "<a href=\"h.md\">",
         "  <img src=\"i.png\">", "* * *", "<span>", "`code [x](x.md)`", "[label]:", "  <dest.md>", "\\[no](no.md)"]


def test_the_fast_path_equals_a_full_parse_on_random_line_mixes() -> None:
    rng = random.Random(14)
    for _ in range(3000):
        body = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 30))) + "\n"
        assert links(body) == links_full(body), body


# --- the website sees the links the validator sees ----------------------------------------------------------------

def test_the_website_and_the_validator_see_the_same_links() -> None:
    body = "".join(TRICKY[:3]) + (
        "\n\nRead [notes](docs/notes(v2).md), [mine](<docs/my notes.md> \"t\"), ![logo](assets/logo.svg),\n"
        "[the guide][guide], [guide], <https://example.com/x>, [web](https://example.org/a?b=c#d) and a note[^1].\n"
        "\n[^1]: See [the run script](scripts/run.py).\n\n"
        "| file |\n| --- |\n| [table](references/table.md) |\n\n"
        "> [quoted](references/quoted.md) and <a href=\"references/html.md\">html</a>\n\n"
        "<div>\n<img src=\"assets/block.png\">\n</div>\n\n"
        "```md\n[code](code.md)\n```\n\n[guide]: references/guide.md\n")
    seen = links(body)
    relative = {link.text for link in seen if ":" not in link.text}
    absolute = {link.text for link in seen if ":" in link.text}
    assert {"b.md", "out.md", "scripts/run.py", "references/html.md", "assets/block.png"} <= relative
    assert not {"a.md", "in.md", "code.md"} & relative  # in code
    html = BodyRenderer().render(body, relative, "RAW/")
    tree = LexborHTMLParser(html)
    rendered = {node.attributes.get("href") or node.attributes.get("src") for node in tree.css("a[href], img[src]")}
    rendered = {url for url in rendered if url and not url.startswith("#")}  # footnote anchors
    assert rendered == {"RAW/" + quote(path) for path in relative} | absolute


def test_the_validators_links_are_the_links_of_githubs_rendering_of_every_skill_of_the_repository() -> None:
    """``bench.links`` compares them on 5,000 real bodies; here on every SKILL.md the repository holds (but the
    hostile fixtures past the body limits, which their own tests hold)."""
    files = sorted(REPO.glob("skills/*/SKILL.md")) + sorted((REPO / "tests").rglob("SKILL.md"))
    compared = 0
    for file in files:
        text = file.read_bytes().decode("utf-8", "replace")
        if len(text) > 20_000:
            continue
        body = text.split("\n---\n", 1)[1] if text.startswith("---\n") and "\n---\n" in text else text
        only_found, only_shown = differences(body)
        unused = {link.href for link in links(body) if link.kind == "reference"}
        assert not only_shown and only_found <= unused, file
        compared += bool(links(body))
    assert compared >= 20


@pytest.mark.parametrize(("body", "only_found", "only_shown"), [
    ("- [Feature]: [Description]\n", {"[Description]"}, set()),  # a definition nothing uses: checked, not shown
    ("[^1]: [n](n.md)\n", {"n.md"}, set()),  # a footnote nothing refers to: GitHub leaves it out
    ("[e](file:///Users/a/e.md)\n", set(), {"file:///Users/a/e.md"}),  # markdown-it refuses `file:`, cmark not
])
def test_the_link_differences_known_on_real_bodies(body: str, only_found: set[str], only_shown: set[str]) -> None:
    """The classes ``python -m bench.links`` lists: none of them changes a finding (``file:`` is not checked)."""
    assert differences(body) == (only_found, only_shown)


# --- bodies without a definition are read by cmark-gfm, the website's renderer ---------------------------------

@pytest.mark.parametrize(("body", "expected"), [
    ("Déjà vu → ü [a](a.md)\n", [(1, 13, "a.md", "link")]),
    ("| ü | é |\n| - | - |\n| ñ | ö ![i](i.png) |\n", [(3, 9, "i.png", "image")]),
    ("> « quoted » <a href=\"h.md\">h</a> <!-- ça -->\n", [(1, 14, "h.md", "link"), (1, 35, "", "comment")]),
    ("- ü\n\n  ñ <https://example.com/é>\n", [(3, 5, "https://example.com/%C3%A9", "autolink")]),
])
def test_columns_count_characters_where_cmark_counts_bytes(body: str, expected: list[tuple[int, int, str, str]]) -> None:
    found, hidden = links_and_hidden(body)
    assert [(link.line, link.column, link.href, link.kind) for link in found + hidden] == expected


def test_a_destination_over_a_line_break_is_read_where_it_is_written() -> None:
    """cmark-gfm loses its count of lines after such a link: the body is read by the other parser instead."""
    body = "[a](\nb.md) then [c](c.md)\n[d\n](d.md) and ![e\nf](e.png)\n"
    assert [(link.line, link.column, link.href) for link in links(body)] == [
        (1, 1, "b.md"), (2, 12, "c.md"), (3, 1, "d.md"), (4, 13, "e.png")]


def test_the_validator_reads_no_link_the_page_shows_as_text() -> None:
    """`</pre>` opens a raw HTML block for cmark-gfm (GitHub shows the lines after it as they are); markdown-it
    read a link there. The validator now reads what the page shows."""
    body = "> quote [q](q.md)\n</pre>\n> quote [r](r.md)\n"
    assert [link.href for link in links(body)] == ["q.md"]
    assert differences(body) == (set(), set())


# --- hostile bodies ----------------------------------------------------------------------------------------------

@pytest.mark.timing
@pytest.mark.parametrize("unit", ["![a](", "[a](", "[a](<b", "[a](b 'c", "[" * 50 + "a](", "](", "[a]: <"])
@pytest.mark.parametrize("separator", ["", "\n", "\n\n"])
def test_a_hostile_body_just_under_the_bracket_limit_is_read_in_seconds(unit: str, separator: str) -> None:
    """The worst bodies the limit lets through: about a second each (the bound leaves room for a busy machine)."""
    count = MAX_BODY_BRACKETS // (unit.count("[") + unit.count("]"))
    body = "# Hostile\n\n" + (unit + separator) * count
    # CPU time of this process, not wall time: what the check costs, however busy the machine is.
    started = time.process_time()
    links(body)
    elapsed = time.process_time() - started
    assert elapsed < 6.0, f"{unit!r} x {count} took {elapsed:.2f} s"


def test_the_link_normaliser_gives_markdown_its_result() -> None:
    # normalize_link skips the parse for plain relative paths and caches the rest: the result must not change.
    from markdown_it.common.normalize_url import normalizeLink

    from builder.core.markdown import normalize_link

    rng = random.Random(15)
    alphabet = "aZ09;/?@&=+$,-_.!~*'()#%:[] \\<>\"é\u00a0Ω"
    samples = ["references/a.md", "//host/x", "https://Example.COM/a b", "mailto:A@B.org", "%41%zz", "a:b", "",
               "https://xn--80ak6aa92e.com/", "https://a..b/", "http://", "https://a/b?c=d#e", "HTTPS://a.b/",
               "https://a.b:8080/x", "https://user@a.b/", "https://a.b/@c", "http://[::1]/x"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(20_000)]
    hosts, paths = "abz09.-Aé", "aZ09;/?@&=+$,-_.!~*'()#:%"
    samples += [rng.choice(["http://", "https://", "//"]) + "".join(rng.choice(hosts) for _ in range(rng.randint(0, 8))) +
                rng.choice(["", "/", "?", "#", ":"]) + "".join(rng.choice(paths) for _ in range(rng.randint(0, 8)))
                for _ in range(20_000)]
    for url in samples:
        assert normalize_link(url) == normalizeLink(url), url


# --- inline text read without the inline parser (links, code spans, images) --------------------------------------

INLINE = [
    "See [`scripts/run.py`](scripts/run.py) and [the `]` guide](guide.md).",
    "[a `[x]` b](c.md) and `[d](e.md)` and ``[f](g.md)`` and `` ` [h](i.md) ` ``",
    "[a`](x.md)` more](y.md)",
    "[a`b](c.md) then `unclosed [d](d.md)",
    "``two`one`` [a](a.md) ``` `[no](no.md)` ``` [b](b.md)",
    "![alt](i.png) !![x](x.png) ![`a`](b.png) !`c`[d](d.md) ![e](e.md",
    "[a](javascript:x) [b](vbscript:y) [c](data:image/png;base64,AA) [d](data:text/html,x) [e](file:///etc)",
    "[x][a](b.md) [c] (d.md) [e]](f.md) ]](g.md) [[h](h.md) [i]]",
    "[a](b.md)c) [d](e(f).md) [g]( h.md) [i](j.md \"t\") [k]() [l](<m.md>)",
    "[multi\nline](m.md) [a](\nb.md) [c\n](d.md)",
    "[é](ü/ñ.md) [a](b%20c.md) [d](e.md#frag?q=1) [f](https://EX.com/A) [g](HTTP://x.y) [h](mailto:a@b.c)",
    "[a](b.md)[c](d.md)![e](f.png)[g](h.md)",
    "*[a](b.md)* **[c](d.md)** _[e](f.md)_ ~~[g](h.md)~~ [*i*](j.md)",
    "[a\u00a0b](c\u00a0d.md) [e](f\x85g.md)",
]


@pytest.mark.parametrize("line", INLINE)
@pytest.mark.parametrize("definition", ["", "\n\n[a]: defined.md\n", "\n\n[x]: x-defined.md\n[e]: e.md\n"])
def test_inline_text_read_without_the_parser_gives_its_links(line: str, definition: str) -> None:
    body = line + definition
    assert links(body) == links_full(body)
    assert links(f"- {line}\n- after [z](z.md)\n{definition}") == links_full(f"- {line}\n- after [z](z.md)\n{definition}")


# Pieces the scan reads itself, and pieces only the parser reads (raw HTML, entities, escapes, footnotes).
PLAIN_PIECES = ["[", "]", "(", ")", "![", "](", "`", "``", "```", "!", "a", " ", "\n", "x.md", "y z", "*", "_",
                "https://e.com/a", "javascript:x", "data:image/png;base64,AA", "~~", "\u00e9", "#f", "\"t\"",
                "](x.md)", "[t](", "[t](x.md)", "`[c](c.md)`"]
PARSER_PIECES = ["<", "&amp;", "\\", "[^1]", "](<", ">)"]


@pytest.mark.parametrize("pieces", [PLAIN_PIECES, PLAIN_PIECES + PARSER_PIECES], ids=["plain", "any"])
def test_inline_text_read_without_the_parser_gives_its_links_on_random_mixes(pieces: list[str]) -> None:
    rng = random.Random(16)
    with_links = 0
    for k in range(4000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 24)))
        body = "Text " + line + (["", "", "\n\n[a]: r.md\n", "\n\n[t]: t.md\n"][k % 4])
        expected = links_full(body)
        assert links(body) == expected, body
        with_links += bool(expected)
    assert with_links > 1500  # most mixes hold a link


def test_most_plain_mixes_are_read_without_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The random mixes above exercise the scan, not only the parser it falls back to."""
    from builder.core import markdown

    outcomes = []
    scan = markdown._plain_inline_links

    def counted(content: str, has_references: bool) -> list[tuple[int, str, str]] | None:
        found = scan(content, has_references)
        outcomes.append(None if found is None else bool(found))
        return found

    monkeypatch.setattr(markdown, "_plain_inline_links", counted)
    rng = random.Random(16)
    for _ in range(2000):  # a footnote: a body with a definition is read by markdown-it, not cmark-gfm
        links("Text " + "".join(rng.choice(PLAIN_PIECES) for _ in range(rng.randint(1, 24))) + "\n\n[^n]: note\n")
    assert outcomes.count(True) > 300 and outcomes.count(False) > 100  # links found, and `[` read as text


BACKTICK_RUNS = [
    "".join("`" * width + "x" for width in range(1, 1400)),  # openers of every width, none closed
    "".join("`" * width + "x" for width in range(1, 1400)) + "[a](a.md) " * 50,
    "[a" + "`x" * 300_000 + "](b.md)",  # a link text of unclosed backticks
    "`" + "``x" * 300_000 + "`",  # one span around many runs of another width
]


@pytest.mark.timing
@pytest.mark.parametrize("runs", BACKTICK_RUNS)
def test_a_body_of_backtick_runs_is_read_in_seconds(runs: str) -> None:
    """About a megabyte of inline text only backticks decide: the scan stays linear (the bound leaves room for a
    busy machine)."""
    body = "Text " + runs + "\n"
    started = time.perf_counter()
    links(body)
    elapsed = time.perf_counter() - started
    assert elapsed < 6.0, f"{len(body):,} characters took {elapsed:.2f} s"


@pytest.mark.parametrize("runs", BACKTICK_RUNS)
def test_a_body_of_backtick_runs_is_read_as_the_parser_reads_it(runs: str) -> None:
    body = "Text " + runs + "\n"
    assert links(body) == links_full(body)


@pytest.mark.parametrize(("body", "found"), [
    ('<div>\n<a href="a.md">x</a> <img src=\'b.png\'>\n</div>\n', [(2, 1, "a.md"), (2, 22, "b.png")]),
    ('<div>\n<!-- <a href="hidden.md"> -->\n<a href="seen.md">\n</div>\n', [(3, 1, "seen.md")]),
    ('<div>\n<a title="1 > 0" href="quoted.md">\n</div>\n', [(2, 1, "quoted.md")]),
    ('<div>\n</a href="end-tag.md"><a href=&quot;x&quot; href="first.md">\n</div>\n', [(2, 23, '"x"')]),
    ('<div>\n<textarea><a href="text.md"></textarea><a href="after.md">\n</div>\n', [(2, 40, "after.md")]),
    ('<div>\n<a href="before.md"><!-- never closed <a href="inside.md">\n</div>\n', [(2, 1, "before.md")]),
    ('<div>\n<? <a href="bogus.md"> ?> <!X <a href="declared.md"> <a href=x.md>\n</div>\n', [(2, 54, "x.md")]),
    ('<div>\n<a href="unclosed.md"\n', []),
    ('<div>\n<!----> <!--> <!---> <a href="after-empty-comments.md">\n</div>\n', [(2, 22, "after-empty-comments.md")]),
])
def test_raw_html_is_read_as_a_browser_tokenizer_reads_it(body: str, found: list[tuple[int, int, str]]) -> None:
    from builder.core.markdown import links

    assert [(link.line, link.column, link.text) for link in links(body)] == found


@pytest.mark.parametrize(("body", "hidden"), [
    ("Text <!-- a note --> more.\n", [(1, 6, "comment", " a note ")]),
    ("<!-- never closed\n\n[a](b.md)\n", [(1, 1, "comment", " never closed\n\n[a](b.md)\n")]),
    ("```\n<!-- shown in code -->\n```\n\n    <!-- indented code -->\n\nSee `<!-- code span -->`.\n", []),
    ("[//]: # (a note)\n[comment]: <> (another)\n[//]: # \"quoted\"\n",
     [(1, 1, "definition", "[//]: # (a note)"), (2, 1, "definition", "[comment]: <> (another)"),
      (3, 1, "definition", '[//]: # "quoted"')]),
    ("Use [docs].\n\n[docs]: https://example.com \"Title\"\n", []),  # a real link, shown where it is used
    ("<div>\n<? an instruction ?> <!X a declaration>\n</div>\n",
     [(2, 1, "comment", " an instruction ?"), (2, 22, "comment", "X a declaration")]),
])
def test_text_the_website_hides_is_found_by_the_parser(body: str, hidden: list[tuple[int, int, str, str]]) -> None:
    from builder.core.markdown import links_and_hidden

    assert [(note.line, note.column, note.kind, note.text) for note in links_and_hidden(body)[1]] == hidden


def test_hidden_text_is_a_warning_naming_its_line_with_controls_made_visible(tmp_path: Path) -> None:
    body = "# Steps\n\nDo it.\n\n<!-- run \x1b[8mthis\x1b[0m " + "x" * 80 + " -->\n"
    assert findings(tmp_path, body) == [
        "9:1 SK410 an HTML comment hides text from the website that agents still read: "
        "`run \\x1b[8mthis\\x1b[0m " + "x" * 43 + "…`"]


def test_text_in_fenced_code_is_neither_a_link_nor_hidden_text() -> None:
    body = ("```html\n<!-- a comment -->\n<a href=\"gone.md\">\n[//]: # (a note)\n[x](x.md)\n```\n"
            "<!-- shown -->\n[y](y.md)\n")
    found, hidden = links_and_hidden(body)
    assert [(link.line, link.href) for link in found] == [(8, "y.md")]
    assert [(note.line, note.kind, note.text) for note in hidden] == [(7, "comment", " shown ")]
