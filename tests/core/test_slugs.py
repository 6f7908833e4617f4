"""The slug rule: a valid name keeps its slug, others get one derived, and contenders are told apart for good."""

from __future__ import annotations

import pytest

from builder.core.model import MAX_NAME, SLUG
from builder.core.slugs import NOT_YET, SlugClaim, assign_slugs, base_slug, derive_slug, group_slug, slug_fits


@pytest.mark.parametrize(("declared", "folder", "slug"), [
    ("pdf-tools", "pdf-tools", "pdf-tools"),
    ("pdf-tools", "PDF Tools", "pdf-tools"),  # a valid name wins over its folder: agents load the name
    ("PDF_Tools", "pdf", "pdf-tools"),
    ("New_Bad_Skill", "x", "new-bad-skill"),
    ("myCamelSkill", "x", "my-camel-skill"),
    ("Café crème", "x", "cafe-creme"),
    ("--x--", "x", "x"),
    ("___", "x", "skill"),
    (None, "pdf", "pdf"),
    (None, "PDF Tools", "pdf-tools"),
    ("", "Folder_Name", "folder-name"),
    (42, "pdf", "pdf"),
])
def test_base_slug(declared: object, folder: str, slug: str) -> None:
    assert base_slug(declared, folder) == slug


def test_a_derived_slug_always_fits_the_grammar_and_length() -> None:
    for text in ["a" * 200, "A-" * 80, "ünïcødé__" * 20, "x" * 63 + "_y", "🙂"]:
        slug = derive_slug(text)
        assert SLUG.fullmatch(slug) and len(slug) <= MAX_NAME, text


def test_group_slug_is_the_last_folder_without_its_dots() -> None:
    assert group_slug("plugins/docs") == "docs"
    assert group_slug("skills/.curated") == "curated"
    assert group_slug("Engineering Team") == "engineering-team"
    assert group_slug(None) is None


def never(claim: SlugClaim) -> int:
    raise AssertionError(f"{claim.path}: history is read only for contended slugs")


def test_without_contention_every_skill_keeps_its_base_and_history_is_not_read() -> None:
    claims = [SlugClaim("skills/a", None, "a"), SlugClaim("plugins/p/skills/b", "plugins/p", "b")]
    assert assign_slugs(claims, never) == {"skills/a": "a", "plugins/p/skills/b": "b"}


def test_the_folder_that_claimed_a_slug_first_keeps_it_and_the_others_take_their_group() -> None:
    claims = [SlugClaim("plugins/docs/skills/pdf", "plugins/docs", "pdf"),
              SlugClaim("plugins/ops/skills/pdf", "plugins/ops", "pdf"),
              SlugClaim("pdf", None, "pdf")]
    since = {"plugins/docs/skills/pdf": 5, "plugins/ops/skills/pdf": 2, "pdf": NOT_YET}
    assert assign_slugs(claims, lambda c: since[c.path]) == {
        "plugins/ops/skills/pdf": "pdf", "plugins/docs/skills/pdf": "docs-pdf", "pdf": "pdf-2"}


def test_ties_go_by_path_and_a_fallback_never_takes_another_skills_own_slug() -> None:
    claims = [SlugClaim("b/skills/x", "b", "x"), SlugClaim("a/skills/x", "a", "x"),
              SlugClaim("skills/b-x", None, "b-x")]
    assigned = assign_slugs(claims, lambda c: 0 if c.path != "skills/b-x" else 1)
    # `a` and `b` tie at position 0 (by path, `a` keeps `x`); `b`'s fallback `b-x` is the base of a newer claim,
    # which is drawn into the contest and, being newer, takes `b-x-2`
    assert assigned == {"a/skills/x": "x", "b/skills/x": "b-x", "skills/b-x": "b-x-2"}


def test_a_slug_once_assigned_stays_when_a_newer_folder_asks_for_it() -> None:
    old = [SlugClaim("plugins/a/skills/pdf", "plugins/a", "pdf"), SlugClaim("plugins/b/skills/pdf", "plugins/b", "pdf")]
    first = assign_slugs(old, lambda c: {"plugins/a/skills/pdf": 3, "plugins/b/skills/pdf": 4}[c.path])
    newer = [*old, SlugClaim("plugins/0/skills/pdf", "plugins/0", "pdf"), SlugClaim("skills/b-pdf", None, "b-pdf")]
    since = {"plugins/a/skills/pdf": 3, "plugins/b/skills/pdf": 4, "plugins/0/skills/pdf": 9, "skills/b-pdf": 9}
    second = assign_slugs(newer, lambda c: since[c.path])
    assert {path: second[path] for path in first} == first == {"plugins/a/skills/pdf": "pdf",
                                                              "plugins/b/skills/pdf": "b-pdf"}
    assert second["plugins/0/skills/pdf"] == "0-pdf" and second["skills/b-pdf"] == "b-pdf-2"


def test_numbered_fallbacks_count_up_and_leave_an_older_skills_own_numbered_slug_alone() -> None:
    claims = [SlugClaim(f"{name}/pdf", None, "pdf") for name in ("a", "b", "c")] + [SlugClaim("d/pdf-2", None, "pdf-2")]
    since = {"a/pdf": 1, "b/pdf": 2, "c/pdf": 3, "d/pdf-2": 0}
    assert assign_slugs(claims, lambda c: since[c.path]) == {"d/pdf-2": "pdf-2", "a/pdf": "pdf", "b/pdf": "pdf-3",
                                                             "c/pdf": "pdf-4"}


@pytest.mark.parametrize(("slug", "declared", "fits"), [
    ("pdf", "pdf", True), ("ops-pdf", "pdf", True), ("pdf-2", "pdf", True), ("my-skill", "My_Skill", True),
    ("docs-my-skill", "My_Skill", True), ("csv-profiler", "other-skill", False), ("pdf", None, False),
    ("pdf-tools", "pdf", False), ("pdf-x", "pdf", False),
])
def test_a_client_accepts_only_a_slug_the_rule_could_give_the_declared_name(slug: str, declared: object,
                                                                            fits: bool) -> None:
    assert slug_fits(slug, declared) is fits
