"""The website renders skill bodies with GitHub's renderer (cmark-gfm): task lists as disabled checkboxes, bare URLs
and e-mail addresses as links, one or two tildes as strikethrough (``<del>``), footnotes with GitHub's ids; the link
finder the validator uses reads no bare URL. Examples are the GFM spec's (version 0.29-gfm), by number."""

from __future__ import annotations

import re

import pytest
from helpers.timing import grows_linearly

from builder.core.markdown import links
from builder.site.render import BodyRenderer

RENDERER = BodyRenderer()


def render(body: str) -> str:
    return RENDERER.render(body, (), "RAW/")


def hrefs(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<a href="([^"]*)" rel="[^"]*">(.*?)</a>', html)


@pytest.mark.parametrize(("example", "body", "expected"), [
    (621, "www.commonmark.org", [("http://www.commonmark.org", "www.commonmark.org")]),
    (622, "Visit www.commonmark.org/help for more information.",
     [("http://www.commonmark.org/help", "www.commonmark.org/help")]),
    (623, "Visit www.commonmark.org.\n\nVisit www.commonmark.org/a.b.",
     [("http://www.commonmark.org", "www.commonmark.org"), ("http://www.commonmark.org/a.b", "www.commonmark.org/a.b")]),
    (624, "www.google.com/search?q=Markup+(business)\n\nwww.google.com/search?q=Markup+(business)))\n\n"
          "(www.google.com/search?q=Markup+(business))\n\n(www.google.com/search?q=Markup+(business)",
     [("http://www.google.com/search?q=Markup+(business)", "www.google.com/search?q=Markup+(business)")] * 4),
    (625, "www.google.com/search?q=(business))+ok",
     [("http://www.google.com/search?q=(business))+ok", "www.google.com/search?q=(business))+ok")]),
    (626, "www.google.com/search?q=commonmark&hl=en\n\nwww.google.com/search?q=commonmark&hl;",
     [("http://www.google.com/search?q=commonmark&amp;hl=en", "www.google.com/search?q=commonmark&amp;hl=en"),
      ("http://www.google.com/search?q=commonmark", "www.google.com/search?q=commonmark")]),
    (627, "www.commonmark.org/he<lp", [("http://www.commonmark.org/he", "www.commonmark.org/he")]),
    (628, "http://commonmark.org\n\n(Visit https://encrypted.google.com/search?q=Markup+(business))\n\n"
          "Anonymous FTP is available at ftp://foo.bar.baz.",
     [("http://commonmark.org", "http://commonmark.org"),
      ("https://encrypted.google.com/search?q=Markup+(business)", "https://encrypted.google.com/search?q=Markup+(business)"),
      ("ftp://foo.bar.baz", "ftp://foo.bar.baz")]),
    (629, "foo@bar.baz", [("mailto:foo@bar.baz", "foo@bar.baz")]),
    (630, "hello@mail+xyz.example isn't valid, but hello+xyz@mail.example is.",
     [("mailto:hello+xyz@mail.example", "hello+xyz@mail.example")]),
    (631, "a.b-c_d@a.b\n\na.b-c_d@a.b.\n\na.b-c_d@a.b-\n\na.b-c_d@a.b_",
     [("mailto:a.b-c_d@a.b", "a.b-c_d@a.b")] * 2),
])
def test_bare_urls_and_e_mail_addresses_are_linked_as_the_gfm_spec_says(example: int, body: str,
                                                                        expected: list[tuple[str, str]]) -> None:
    assert hrefs(render(body)) == expected


@pytest.mark.parametrize(("body", "expected"), [
    ("a 'https://example.com/' b", [("https://example.com/", "https://example.com/")]),  # after a quote
    ("foo,bar@example.com", [("mailto:bar@example.com", "bar@example.com")]),  # after a comma
    ("mailto:a@b.co and xmpp:a@b.co/r", [("mailto:a@b.co", "mailto:a@b.co"), ("xmpp:a@b.co/r", "xmpp:a@b.co/r")]),
    ("xhttp://a.com 'www.a.com http://a_b www.a.b_c", []),  # not a scheme, not after a quote, `_` at the end
    ("[open https://a.com www.a.com", []),  # a `[` still open: GitHub links neither
    ("[closed] https://a.com", [("https://a.com", "https://a.com")]),
    ("`https://a.com` [text](https://b.com) https://c.com/*x*",
     [("https://b.com", "text"), ("https://c.com/*x", "https://c.com/*x")]),
])
def test_autolinks_follow_github_where_the_spec_is_silent(body: str, expected: list[tuple[str, str]]) -> None:
    """Each expectation is what cmark-gfm (GitHub's renderer) gives."""
    assert hrefs(render(body)) == expected


def test_the_validators_link_finder_reads_no_bare_url_or_e_mail() -> None:
    body = "See https://example.com, www.example.com and a@example.com; [a file](references/a.md).\n"
    assert [link.href for link in links(body)] == ["references/a.md"]
    assert len(hrefs(render(body))) == 3


def test_task_list_items_are_disabled_checkboxes() -> None:
    """GFM spec 279 and 280: `[ ]` and `[x]` at the start of an item, nested lists too."""
    html = render("- [ ] foo\n- [x] bar\n\n* [x] foo\n  - [ ] bar\n  - [x] baz\n* [ ] bim\n")
    assert html.count('<input type="checkbox" disabled="">') == 3
    assert html.count('<input type="checkbox" checked="" disabled="">') == 3
    assert '<li class="task-list-item"><input type="checkbox" disabled=""> foo</li>' in html
    assert '<ul class="contains-task-list">' in html
    assert "[ ]" not in html and "[x]" not in html
    assert "<input" not in render("- [ ]\n- [ ]x\n- x\n\n  [ ] later\n")  # no space after, not at the start


@pytest.mark.parametrize("html", [
    '<input type="text" name="q" value="secret" onfocus="alert(1)" autofocus>',
    '<input type="image" src="https://evil.example/x.png" formaction="https://evil.example/">',
    '<input type="hidden" form="f" name="token"><input>',
    '<input type="checkbox" class="x" id="y" style="z" checked="checked">',
])
def test_a_body_can_put_in_no_form_control_but_a_disabled_checkbox(html: str) -> None:
    rendered = render(html)
    controls = re.findall(r"<input[^>]*>", rendered)
    assert controls
    for control in controls:
        attributes = dict(re.findall(r'(\w+)="([^"]*)"', control))
        assert attributes.get("type") == "checkbox" and attributes.get("disabled") == ""
        assert set(attributes) <= {"type", "disabled", "checked"}
    assert "<form" not in rendered and "<button" not in rendered


@pytest.mark.parametrize(("example", "body", "expected"), [
    (491, "~~Hi~~ Hello, ~there~ world!", "<p><del>Hi</del> Hello, <del>there</del> world!</p>"),
    (492, "This ~~has a\n\nnew paragraph~~.", "<p>This ~~has a</p>\n<p>new paragraph~~.</p>"),
    (493, "This will ~~~not~~~ strike.", "<p>This will ~~~not~~~ strike.</p>"),
])
def test_one_or_two_tildes_strike_through_as_the_gfm_spec_says(example: int, body: str, expected: str) -> None:
    assert render(body).strip() == expected


def test_tildes_strike_through_only_in_pairs_of_one_width() -> None:
    assert render("~a~~ and ~~b~").strip() == "<p>~a~~ and ~~b~</p>"
    assert render("~a ~~b~~ c~").strip() == "<p><del>a <del>b</del> c</del></p>"


def test_the_checkbox_spelling_reaches_no_attribute_or_text() -> None:
    html = render('<a href="https://x.example" title="<input>">t</a> `<input checked="">` &lt;input&gt;')
    assert "<input" not in html


# Bodies of 100,000 characters, each a unit repeated, aimed at the autolink, task list and strikethrough rules.
HOSTILE = ["." * 4, "www.", "www.a_", "_www.a", "(www.a_", "a@", "a@a.", "a@a@a.", "@", "-@-.", "mailto:", "xmpp:a@",
           ":", "a!://", "x://", "http://", "http://a(", "http://a)", "http://a.b;", "w", "[", "~a", "- [ ] x\n"]


@pytest.mark.timing
@pytest.mark.parametrize("unit", HOSTILE)
def test_hostile_bodies_render_in_linear_time(unit: str) -> None:
    """A quadratic read (a scan from every `:` to the end of the paragraph took 60 s at 50,000 characters) fails."""
    linear, times = grows_linearly(lambda size: render(unit * (size // len(unit))), 100_000)
    assert linear, f"{unit!r}: {times} characters"


def test_footnotes_take_githubs_ids_from_their_labels() -> None:
    html = render("Claim[^src] and more[^2].\n\n[^src]: The source.\n[^2]: Two.\n")
    assert '<sup><a href="#skill-fn-src" id="skill-fnref-src" rel="noopener noreferrer nofollow">1</a></sup>' in html
    assert '<li id="skill-fn-src">' in html and '<li id="skill-fn-2">' in html
    assert '<a href="#skill-fnref-src" rel="noopener noreferrer nofollow">↩</a>' in html


def test_task_lists_take_githubs_classes_in_loose_and_ordered_lists() -> None:
    html = render("1. [x] done\n\n2. [ ] to do\n\n- plain\n")
    assert '<ol class="contains-task-list">' in html
    assert html.count('<li class="task-list-item">') == 2
    assert '<ul>\n<li>plain</li>' in html  # a list without a checkbox is left as it is
    assert html.count("<input") == 2


def test_headings_move_one_level_down_with_ids_from_their_text() -> None:
    html = render("# Set up `tool` ![logo](x.png)[^1] <!-- c -->\n\n## Set up tool\n\n###### Deep\n\n"
                  "Set up tool\n===\n\n<h2>raw</h2>\n\n[^1]: note\n")
    assert '<h2 id="skill-set-up-tool">Set up <code>tool</code>' in html
    assert '<h3 id="skill-set-up-tool_1">Set up tool</h3>' in html
    assert '<h6 id="skill-deep">Deep</h6>' in html
    assert '<h2 id="skill-set-up-tool_2">Set up tool</h2>' in html
    assert "<h2>raw</h2>" in html  # raw HTML is not a Markdown heading: not moved, no id


def test_a_heading_that_copies_a_number_suffix_takes_the_next_free_id() -> None:
    html = render("# a\n\n# a_1\n\n# a\n\n# a\n")
    assert re.findall(r'id="skill-([^"]*)"', html) == ["a", "a_1", "a_2", "a_3"]


def test_a_body_rendering_past_the_cap_is_shown_as_text_and_says_why() -> None:
    """A 15 KB table (100 header cells, 3,000 rows of one) renders to 12 MB: cmark-gfm fills in the missing cells."""
    body = "|" + "a|" * 100 + "\n|" + "-|" * 100 + "\n" + "x<b>\n" * 3000
    html = render(body)
    assert "<table" not in html and "<td" not in html
    assert "This body is shown as text: rendered, it would be 12.2 MB of HTML, past the website's limit of 1 MB." in html
    assert "<pre><code>|a|a|" in html and "x&lt;b&gt;\nx&lt;b&gt;" in html
    assert len(html) < 3 * len(body)


def test_footnotes_with_capitals_or_non_ascii_labels_keep_their_anchors() -> None:
    html = render("a[^Note] b[^é]\n\n[^Note]: one\n[^é]: two\n")
    assert '<a href="#skill-fn-Note" id="skill-fnref-Note"' in html and '<li id="skill-fn-Note">' in html
    assert '<a href="#skill-fn-%C3%A9" id="skill-fnref-%C3%A9"' in html and '<li id="skill-fn-%C3%A9">' in html
