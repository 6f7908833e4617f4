"""Validation findings as values, and the table of rules that produce them.

Every rule has a stable code; the table is the single source for messages, severities and the
generated rules list in the docs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    file: str  # path as the user gave it (relative to where they ran the command when possible)
    line: int  # 1-based; 0 when the finding is about the whole file or folder
    message: str
    hint: str = ""
    column: int = 0  # 1-based; 0 when not known
    skill: str = ""
    baselined: bool = False  # in the registry's baseline of known findings (validate/baseline.py)

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.code, self.message)

    @property
    def source(self) -> str:
        """Where the rule comes from: STANDARD, CLAUDE_CODE, REGISTRY or REGISTRY_POLICY."""
        return RULES[self.code].source

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "hint": self.hint,
            "skill": self.skill,
            "source": self.source,
            "baselined": self.baselined,
        }


# Where a rule comes from, as findings say it.
STANDARD = "standard"  # the open Agent Skills standard, as its reference validator skills-ref reads it
CLAUDE_CODE = "claude-code"  # Claude Code's own frontmatter fields (the claude-code and agents profiles)
REGISTRY = "registry"  # what a registry built by skillreg needs to publish a skill safely and show it well
REGISTRY_POLICY = "registry policy"  # this registry's conventions, each switched on in registry.yaml's `policy:`


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    title: str  # one line for the generated rules list
    hint: str = ""
    source: str = STANDARD
    policy: str = ""  # for REGISTRY_POLICY rules: the key under `policy:` in registry.yaml that switches it on

    def at(self, file: str, line: int = 0, message: str = "", *, hint: str | None = None,
           column: int = 0, skill: str = "", severity: Severity | None = None) -> Diagnostic:
        return Diagnostic(
            code=self.code,
            severity=severity or self.severity,
            file=file,
            line=line,
            column=column,
            message=message or self.title,
            hint=self.hint if hint is None else hint,
            skill=skill,
        )


E, W = Severity.ERROR, Severity.WARNING

_RULES = [
    # SK0xx: the SKILL.md file and its frontmatter block
    Rule("SK001", E, "The skill folder has no SKILL.md", "Create SKILL.md with YAML frontmatter (`skillreg new NAME`)."),
    Rule("SK002", W, "SKILL.md is spelled `skill.md`", "Rename the file to SKILL.md; some agents only look for that name."),
    Rule("SK003", E, "SKILL.md is not valid UTF-8", "Save the file as UTF-8."),
    Rule("SK004", E, "SKILL.md does not start with a frontmatter block",
         "The first line must be exactly `---`, followed by YAML and another `---` line."),
    Rule("SK005", E, "The frontmatter block is never closed", "Add a line that is exactly `---` after the YAML."),
    Rule("SK006", E, "The frontmatter is larger than the limit", "Move long text into the body or references/."),
    Rule("SK007", E, "The frontmatter is not valid YAML", "Quote values that contain `: ` or start with a special character."),
    Rule("SK008", E, "A frontmatter key appears twice",
         "Keep one of the two. The other checks read the last one, as YAML readers that accept the file do; "
         "stricter ones, as in several agents, refuse the whole file."),
    Rule("SK009", E, "YAML aliases expand beyond the limit or refer to themselves",
         "Write the values out instead of using anchors and aliases."),
    Rule("SK010", E, "The frontmatter is not a YAML mapping", "Write `key: value` lines, starting with `name:`."),
    Rule("SK011", E, "SKILL.md is empty", "Start from `skillreg new NAME`."),
    Rule("SK012", E, "A frontmatter key is not a string", "Keys are field names such as `name` or `description`."),
    Rule("SK013", E, "The frontmatter uses YAML that strict readers such as skills-ref refuse",
         "Write lists as `- item` lines or one string, and values out in full (no `[...]`, `{...}`, `&`, `*` or `!tags`). "
         "A warning outside the `spec` profile."),
    Rule("SK014", E, "SKILL.md starts with a byte-order mark",
         "Save the file as UTF-8 without a BOM; skills-ref, Codex and Gemini CLI do not see the `---` behind it. "
         "A warning under the `claude-code` profile."),
    Rule("SK015", E, "The frontmatter nests deeper than the limit",
         "Flatten the structure; no field of the standard or of Claude Code needs more than a few levels."),
    Rule("SK016", E, "The frontmatter holds a character that YAML readers disagree on as a line break",
         "Delete it, or write a real line break (or a space) in its place: PyYAML reads U+0085, U+2028 and "
         "U+2029 as line breaks and YAML 1.2 readers as text, so text after one can be hidden from the site "
         "and shown to agents; a lone carriage return is a line break to YAML but not to line-by-line readers."),
    # SK1xx: fields of the open standard and the profiles
    Rule("SK101", E, "Required field `name` is missing", "Add `name:` with the folder's name."),
    Rule("SK102", E, "`name` must be a non-empty string", ""),
    Rule("SK103", E, "`name` is longer than 64 characters", "Shorten the name (and rename the folder to match)."),
    Rule("SK104", E, "`name` may only contain lowercase letters, digits and hyphens", ""),
    Rule("SK105", E, "`name` must not start or end with a hyphen or contain `--`", ""),
    Rule("SK106", E, "`name` differs from the folder name", "Rename the folder or the name so they match."),
    Rule("SK107", E, "Required field `description` is missing",
         "Add `description:` saying what the skill does and when to use it."),
    Rule("SK108", E, "`description` must be a non-empty string", ""),
    Rule("SK109", E, "`description` is longer than 1024 characters", "Move detail into the body; keep the trigger sentence."),
    Rule("SK110", E, "`compatibility` must be a non-empty string", ""),
    Rule("SK111", E, "`compatibility` is longer than 500 characters", ""),
    Rule("SK112", E, "`metadata` must be a mapping of strings to strings", ""),
    Rule("SK113", E, "A `metadata` value is not a string", "Quote it, e.g. `version: \"1.0.0\"`."),
    Rule("SK114", E, "`license` must be a string", "Use an SPDX identifier such as `MIT`, or a file name."),
    Rule("SK115", W, "`allowed-tools` is a YAML list; the standard expects one space-separated string",
         "Write `allowed-tools: Read Bash(git:*)`."),
    Rule("SK116", E, "`allowed-tools` must be a space-separated string", ""),
    Rule("SK120", E, "Unknown frontmatter field", ""),
    Rule("SK122", E, "A Claude Code field has the wrong type or value", ""),
    Rule("SK123", W, "`when_to_use` is deprecated", "Fold it into `description`, which agents read to decide when to load the skill."),
    # SK2xx: template text left in place
    Rule("SK201", E, "`name` is the template placeholder", "Pick a name that says what the skill does."),
    Rule("SK202", E, "`description` still contains template text", "Describe what the skill does and when to use it."),
    # SK3xx: registry metadata
    Rule("SK301", E, "`metadata.category` is not a category of this registry", ""),
    Rule("SK302", E, "`metadata.tags` has too many tags", "Keep the few tags a searcher would type."),
    Rule("SK303", E, "A tag is not a lowercase slug", "Use lowercase letters, digits and hyphens, e.g. `code-review`."),
    Rule("SK304", E, "`metadata.version` is not a semantic version", "Use MAJOR.MINOR.PATCH, e.g. `1.0.0`."),
    Rule("SK305", W, "`metadata.category` is missing", "Add `category:` under `metadata:` so the skill is listed in a category."),
    Rule("SK306", E, "A changed skill keeps its `metadata.version`, or lowers it",
         "Under `--changed-since`, raise `metadata.version` (a semantic version) whenever the skill's files change, "
         "so each published version has a number of its own."),
    # SK4xx: the Markdown body
    Rule("SK401", W, "SKILL.md body is longer than 500 lines", "Move detail into references/ and link to it."),
    Rule("SK402", W, "SKILL.md body is longer than 5,000 words", "Move detail into references/ and link to it."),
    Rule("SK403", W, "Absolute user path in SKILL.md", "Refer to bundled files relative to the skill (`{baseDir}/scripts/x.py`)."),
    Rule("SK404", E, "A relative link points to a file that does not exist", ""),
    Rule("SK405", E, "A link leaves the skill folder", "Bundle the file inside the skill and link to it relatively."),
    Rule("SK406", W, "SKILL.md has no instructions after the frontmatter", "Write the steps the agent should follow."),
    Rule("SK407", E, "Lists or block quotes nest deeper than the limit",
         "Flatten the structure; more than a few levels of lists or quotes is hard to read, and far deeper "
         "nesting breaks the website's Markdown renderer."),
    Rule("SK408", E, "The body holds more HTML tags than the limit",
         "Write the content in Markdown, or move it into a file under references/; deeply nested HTML takes "
         "the website's sanitiser minutes to render."),
    Rule("SK409", E, "The body holds more square brackets than the limit",
         "Move long lists of links into a file under references/; every bracket costs the Markdown parser time, "
         "and a body of nothing else takes it many seconds to read."),
    Rule("SK410", W, "The body holds text that agents read but the website hides",
         "HTML comments and link definitions used as comments (`[//]: # (note)`) never show on the website, so a "
         "reviewer reading it cannot see what they tell the agent: write the text out, or delete it."),
    # SK5xx: the files of the folder
    Rule("SK501", E, "Symbolic link in a skill folder", "Replace the link with the file itself; links are not published."),
    Rule("SK502", E, "Special file (device, FIFO or socket) in a skill folder", "Remove it."),
    Rule("SK503", E, "A path contains a `..` component", ""),
    Rule("SK504", E, "A path contains a control character", "Rename the file."),
    Rule("SK505", E, "A path is longer than 200 characters", "Use a shorter path."),
    Rule("SK506", E, "Two paths (files or folders) differ only in case", "Rename one; they collide on macOS and Windows."),
    Rule("SK507", E, "A file is larger than the per-file limit", "Shrink it or leave it out of the skill."),
    Rule("SK508", E, "The skill is larger than the per-skill limit", "Leave out large files or link to them instead."),
    Rule("SK509", W, "Binary file outside assets/", "Move binary files into assets/."),
    Rule("SK510", E, "Junk file in a skill folder", "Delete it and add it to .gitignore."),
    Rule("SK511", E, "Invisible or bidirectional Unicode control character", "Delete the character; it can hide what the text says."),
    Rule("SK512", E, "A file cannot be read", ""),
    Rule("SK513", E, "A file name is not valid UTF-8", "Rename the file."),
    Rule("SK514", E, "A path contains a backslash",
         "Rename the file: Windows and unzip tools read `\\` as a folder separator, so `..\\x` climbs out of the skill."),
    Rule("SK515", E, "Two paths are one name in different Unicode normalisation forms",
         "Rename one (or save both names as NFC); macOS stores them as one file, so one would overwrite the other."),
    Rule("SK516", E, "A file or folder name cannot be created on Windows",
         "Rename it: Windows refuses device names (CON, NUL, COM1, LPT1, ... with any extension), names ending in "
         "a dot or a space and the characters : * ? \" < > |. An error, not a warning: the skill could be neither "
         "checked out nor installed there."),
    Rule("SK517", W, "A file is of a type a browser runs as a page, so it is published in archives only",
         "The registry never serves a skill's HTML, SVG, XHTML or XML file from its own site, where a script in it "
         "would act for the registry: installs get it from the zip bundle and the discovery archive, the detail "
         "document and the website list it without a link, and the skill is left out of the discovery v0.1 index, "
         "whose clients fetch every file raw. Nothing to fix; to have the file readable on the site, give it an "
         "extension browsers show as text (`page.html.txt`)."),
    Rule("SK518", E, "The skill holds more files than the limit",
         "Bundle fewer, larger files (an archive under assets/, say); clients and the MCP Skills extension take at "
         "most 512 files per skill."),
    # SK6xx: across the registry
    Rule("SK601", W, "Two skills have the same name; each publishes under its own slug",
         "Agents that load both see one name twice: rename one of them."),
    Rule("SK602", E, "Two skill names are equal after Unicode normalisation and case folding", ""),
    Rule("SK603", E, "The name is reserved for the registry's own pages", "Pick another name."),
    Rule("SK604", W, "No skills found", "A skill is a folder holding SKILL.md."),
    Rule("SK605", E, "The baseline holds findings the base branch's baseline does not",
         "Fix the new findings instead: a pull request cannot add its own findings to the baseline. Only "
         "`skillreg baseline --prune`, which removes fixed findings, may change it in a pull request."),
    Rule("SK606", W, "A baseline entry is stale: the finding it holds is fixed",
         "Run `skillreg baseline --prune` and commit the smaller baseline."),
    Rule("SK608", W, "A linked skill folder leads outside the repository, or a linked SKILL.md nowhere or to a "
         "file that is not a skill's SKILL.md; it is left out",
         "Replace the link with the folder or file itself, or remove it. A link to another skill's SKILL.md in the "
         "repository is that skill, counted once."),
]

# Rules that are not the open standard's, by code or code prefix; the rest are.
_SOURCES = {"SK006": REGISTRY, "SK015": REGISTRY, "SK016": REGISTRY, "SK4": REGISTRY, "SK5": REGISTRY, "SK6": REGISTRY,
            "SK122": CLAUDE_CODE, "SK123": CLAUDE_CODE}
# Registry policy: the `policy:` key of registry.yaml that switches each of these rules on.
POLICY_RULES = {"SK201": "placeholders", "SK202": "placeholders", "SK301": "categories", "SK305": "categories",
                "SK302": "tags", "SK303": "tags", "SK304": "semver", "SK306": "version_bump"}


def _sourced(rule: Rule) -> Rule:
    if rule.code in POLICY_RULES:
        return replace(rule, source=REGISTRY_POLICY, policy=POLICY_RULES[rule.code])
    return replace(rule, source=_SOURCES.get(rule.code, _SOURCES.get(rule.code[:3], STANDARD)))


RULES: dict[str, Rule] = {rule.code: _sourced(rule) for rule in _RULES}

# Safety: what keeps a registry, its website and the people who install from it safe, and what the host takes.
# A baseline never holds these (validate/baseline.py): paths, links and special files, hosting limits, active
# content, hidden text and input that would take the parsers or the renderer minutes. The files rules (SK5xx)
# all are, but SK509, a binary file outside assets/, which is only layout advice.
SAFETY_RULES = frozenset({
    "SK006", "SK009", "SK015", "SK016",  # frontmatter: size, alias bombs, nesting, text readers split differently
    "SK407", "SK408", "SK409", "SK410",  # body: the renderer's limits, text the website hides
    *(rule.code for rule in _RULES if rule.code.startswith("SK5") and rule.code != "SK509"),
})

# The `agents` profile publishes what Claude Code, Codex and Gemini CLI all load: these findings, errors under
# `spec`, are warnings there. Every agent reads flow-style YAML, any metadata, unknown fields, names with
# capitals or underscores and a name that is not the folder's; none reads `compatibility` or `license`; a link
# out of the skill or to a missing file only fails once the skill is installed. What stays an error is what one
# of them refuses: no or non-string `name` or `description`, a name over 64 or a description over 1,024
# characters (Codex), `metadata` that is not a mapping (Codex), YAML that does not parse, a byte-order mark
# (Codex and Gemini CLI do not see the `---` behind it).
AGENTS_WARNINGS = frozenset({"SK013", "SK104", "SK105", "SK106", "SK110", "SK111", "SK113", "SK114", "SK120",
                             "SK404", "SK405"})


def severity_under(rule: Rule, profile: str) -> Severity:
    """A rule's severity under a profile: SK013 and SK014 warn outside `spec`, SK120 under `agents` (as
    AGENTS_WARNINGS says); everything else keeps the table's."""
    if profile == "agents" and rule.code in AGENTS_WARNINGS:
        return Severity.WARNING
    if profile != "spec" and rule.code == "SK013" or profile == "claude-code" and rule.code == "SK014":
        return Severity.WARNING
    return rule.severity


def ratcheted(code: str) -> bool:
    """Whether a new finding of this rule fails validation under a baseline, whatever the profile: the open
    standard's rules and Claude Code's field types. A new or changed skill must meet them."""
    return RULES[code].source == STANDARD or code == "SK122"


def baselinable(d: Diagnostic) -> bool:
    """Whether a baseline may hold this finding: not a safety rule nor the baseline's own, and one that fails
    validation now (an error) or would if it were new (``ratcheted``)."""
    return d.code not in SAFETY_RULES and d.code not in ("SK605", "SK606") and \
        (d.severity is Severity.ERROR or ratcheted(d.code))
