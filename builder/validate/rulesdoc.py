"""The list of validation rules, generated from the rule table so the docs never drift from the validator.

``skillreg rules --markdown > docs/rules.md`` writes the committed page; a test fails when they differ.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.diagnostics import AGENTS_WARNINGS, RULES, SAFETY_RULES, Rule, ratcheted, severity_under

RULES_DOC_PATH = "docs/rules.md"

GROUPS = {
    "SK0": "The SKILL.md file and its frontmatter block",
    "SK1": "Fields of the open standard and the profiles",
    "SK2": "Template text left in place",
    "SK3": "Registry metadata",
    "SK4": "The Markdown body",
    "SK5": "The files of the skill folder",
    "SK6": "Across the registry",
}

# What a group's rules read, where the table's one line per rule cannot say it.
NOTES = {
    "SK4": "SK404 and SK405 read the body as GitHub does, with a CommonMark parser that finds the links the "
           "website's\nrenderer (GitHub's cmark-gfm) makes:\ninline links and images, reference definitions "
           "(checked where they are written, once, however often they are\nused) and the `href` of raw HTML `<a>` "
           "and the `src` of `<img>` tags, which the website renders as links too.\nLinks in code (fenced, "
           "indented or inline) and in image descriptions are text; GitHub footnotes (`[^1]: ...`)\nare notes, and "
           "the links inside them are checked. URLs with a scheme (`https:`, `mailto:`), `#fragment` links\nand "
           "`{baseDir}/` paths are not checked. A link is a URL: a backslash is a character of the name, not a "
           "folder\nseparator, and `%20` is a space.",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _groups(rules: Iterable[Rule]) -> dict[str, list[Rule]]:
    grouped: dict[str, list[Rule]] = {}
    for rule in sorted(rules, key=lambda r: r.code):
        grouped.setdefault(rule.code[:3], []).append(rule)
    return grouped


def _baseline(rule: Rule) -> str:
    if rule.code in SAFETY_RULES or rule.code in ("SK605", "SK606"):
        return "never"
    return "ratchet" if ratcheted(rule.code) else "held"


def rules_text() -> str:
    """One line per rule: code, severity, title."""
    rules = sorted(RULES.values(), key=lambda r: r.code)
    return "".join(f"{r.code}  {r.severity.value:<7}  {r.title}\n" for r in rules)


def rules_markdown() -> str:
    errors = sum(r.severity.value == "error" for r in RULES.values())
    out = [
        "# Validation rules",
        "",
        "<!-- Generated from the rule table in builder/core/diagnostics.py by `skillreg rules --markdown`. "
        "Do not edit; regenerate. -->",
        "",
        "Every finding of `skillreg validate` carries one of these codes, with the file and line it is about.",
        f"There are {len(RULES)} rules: {errors} errors, which fail validation and stop a build, and "
        f"{len(RULES) - errors} warnings, which fail only under `--strict`.",
        "A finding's message names the exact problem; the fix below is the general advice, and some findings",
        "carry a more specific hint (\"did you mean ...\").",
        "",
        "The Source column says where a rule comes from: `standard` is the open Agent Skills standard (what "
        "`--profile spec` alone checks), `claude-code` Claude Code's own fields, `registry` what skillreg needs "
        "to publish a skill safely, and `registry policy` this registry's conventions, each checked only when "
        "registry.yaml switches it on under `policy:` (for example `policy: {semver: true}`); their findings "
        "end with (registry policy `semver`, registry.yaml).",
        "",
        "The Severity column is the rule's severity under `spec` and `claude-code`; the `agents` column its "
        "severity under `agents`, which publishes what Claude Code, Codex and Gemini CLI load and keeps each "
        f"departure from the standard as a warning ({len(AGENTS_WARNINGS)} rules are warnings there). SK013 is "
        "a warning outside `spec`, SK014 under `claude-code`.",
        "",
        "The Baseline column says what a registry's baseline of known findings (`skillreg baseline`) does with "
        "a rule: `ratchet` rules (the open standard's, and Claude Code's field types) may be held, and a finding "
        "of one that the baseline does not hold is an error under every profile; `held` rules may be held when "
        "they are errors; `never` marks the safety rules, which no baseline holds "
        f"({len(SAFETY_RULES)} of them).",
        "",
    ]
    for prefix, rules in _groups(RULES.values()).items():
        out += [f"## {prefix}xx: {GROUPS.get(prefix, 'Other rules')}", "",
                "| Code | Severity | `agents` | Baseline | Source | Rule | Fix |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in rules:
            source = f"{r.source} (`{r.policy}`)" if r.policy else r.source
            out.append(f"| {r.code} | {r.severity.value} | {severity_under(r, 'agents').value} | {_baseline(r)} | "
                       f"{source} | {_cell(r.title)} | {_cell(r.hint) or '-'} |")
        out.append("")
        if prefix in NOTES:
            out += [NOTES[prefix], ""]
    return "\n".join(out)
