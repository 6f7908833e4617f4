"""The rules one skill keeps: its frontmatter fields under each profile (with hints on how to fix them) and its
files; the body's rules are in ``body``, the name's in ``names``.

``check_skill`` returns every finding; nothing here prints or writes.
"""

from __future__ import annotations

import datetime
import difflib
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..core.config import RegistryConfig, profile_named
from ..core.content_types import ArchiveOnly, extension, kept_to_archives
from ..core.diagnostics import RULES, STANDARD, Diagnostic, severity_under
from ..core.loader import display_path
from ..core.model import MAX_NAME, SLUG, Frontmatter, Skill
from ..core.suggest import close_match
from .body import check_body
from .invisible import invisible_chars, may_hide
from .names import NAME_CHARS, name_findings

MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
PLACEHOLDER_TEXT = re.compile(r"^\s*(?:TODO|TBD|FIXME)\b|\bTODO:|\[TODO|Replace with|Describe what this skill does")

# What each profile accepts at the top level of the frontmatter, and the type each field must have.
OPEN_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_str_or_str_list(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))


def _one_of(*values: str) -> Callable[[Any], bool]:
    return lambda v: v in values


# Claude Code's documented skill fields (its skills documentation's frontmatter reference), with their types.
CLAUDE_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "model": (_is_str, "a model name string"),
    "version": (_is_str, "a version string"),
    "disable-model-invocation": (_is_bool, "true or false"),
    "user-invocable": (_is_bool, "true or false"),
    "argument-hint": (_is_str, "a string"),
    "arguments": (_is_str_or_str_list, "a space-separated string or a list of argument names"),
    "context": (_one_of("inline", "fork"), "`inline` or `fork`"),
    "agent": (_is_str, "an agent name string"),
    "background": (_is_bool, "true or false"),
    "effort": (_one_of("low", "medium", "high", "xhigh", "max"), "one of low, medium, high, xhigh, max"),
    "paths": (_is_str_or_str_list, "a glob string or a list of glob strings"),
    "disallowed-tools": (_is_str_or_str_list, "a space-separated string or a list of tools"),
    "shell": (_one_of("bash", "powershell"), "`bash` or `powershell`"),
    "hooks": (lambda v: isinstance(v, dict), "a mapping of hook events"),
    "when_to_use": (_is_str, "a string"),
    "mode": (_is_bool, "true or false"),
}


def check_skill(skill: Skill, config: RegistryConfig, profile: str) -> list[Diagnostic]:
    profile = profile_named(profile)
    out: list[Diagnostic] = []
    shown = display_path(skill.folder)
    md_file = f"{shown}/{skill.skill_md}"
    if skill.frontmatter is not None:
        out.extend(_check_fields(skill, config, profile, md_file))
        out.extend(check_body(skill, md_file, profile))
    for f in skill.files:
        kept = kept_to_archives(f.path, f.data) if f.path != skill.skill_md else None
        if kept is not None:
            out.append(RULES["SK517"].at(f"{shown}/{f.path}", 0, archive_only_message(f.path, kept),
                                         skill=skill.name))
        if f.path != skill.skill_md and not f.path.startswith("assets/") and not f.is_text:  # SK003 covers it
            out.append(RULES["SK509"].at(f"{shown}/{f.path}", 0, f"`{f.path}` is binary but not under assets/",
                                         skill=skill.name))
        if (f.path == skill.skill_md or f.path.startswith("scripts/")) and may_hide(f.data) and f.is_text:
            out.extend(invisible_chars(f.data.decode("utf-8"), f"{shown}/{f.path}", skill.name))
    return with_policy(at_profile(out, profile), config)


def departures(skill: Skill, found: Iterable[Diagnostic]) -> tuple[bool, list[str]]:
    """Whether the skill meets the open standard, whatever profile published it (no finding of one of the
    standard's rules, no field outside it), and the fields outside it, sorted (Claude Code's, say)."""
    data = skill.frontmatter.data if skill.frontmatter else {}
    outside = sorted(key for key in data if key not in OPEN_FIELDS)
    return not outside and not any(d.source == STANDARD for d in found), outside


def at_profile(found: list[Diagnostic], profile: str) -> list[Diagnostic]:
    """The findings with the severity the profile gives their rule (``severity_under``)."""
    out = []
    for d in found:
        rule = RULES[d.code]
        severity = severity_under(rule, profile) if d.severity is rule.severity else d.severity
        out.append(d if severity is d.severity else replace(d, severity=severity))
    return out


def archive_only_message(path: str, kept: ArchiveOnly) -> str:
    """SK517's message: the type that keeps ``path`` to the archives, and whose type it is."""
    runs = f"{kept.media_type}, which a browser runs as a page"
    where = "published in archives only, never as a file on the site"
    if not kept.host:
        return f"`{path}` is {runs}: {where}"
    hosts = f"some static hosts serve `.{extension(path)}` files as {runs}"
    if kept.media_type.endswith("html"):
        return f"{hosts}: `{path}` is {where}"
    return f"`{path}` starts like an XML document and {hosts}: {where}"


def with_policy(found: list[Diagnostic], config: RegistryConfig) -> list[Diagnostic]:
    """The findings without those of registry policy that registry.yaml does not switch on."""
    enabled = config.policy.enabled
    return [d for d in found if not RULES[d.code].policy or RULES[d.code].policy in enabled]


def _check_fields(skill: Skill, config: RegistryConfig, profile: str, file: str) -> Iterable[Diagnostic]:
    fm = skill.frontmatter
    assert fm is not None

    def at(code: str, key: str, message: str = "", **kw: Any) -> Diagnostic:
        return RULES[code].at(file, fm.line_of(key), message, skill=skill.name, **kw)

    def shown(key: str) -> str:
        return _show(fm.data[key], fm.sources.get(key))

    yield from _check_required(skill, fm, at, shown)
    yield from _check_optional(fm, at, shown)
    if "metadata" in fm.data:
        yield from _check_metadata(fm.data["metadata"], fm, config, at)
    elif config.categories:
        yield at("SK305", "name", "`metadata.category` is missing")
    yield from _check_yaml_form(skill, fm, file)
    yield from _check_profile_fields(fm, profile, at, shown)


_At = Callable[..., Diagnostic]  # a finding at a field's line: (code, key, message, **fields)


def _check_required(skill: Skill, fm: Frontmatter, at: _At, shown: Callable[[str], str]) -> Iterable[Diagnostic]:
    """``name`` and ``description``."""
    data = fm.data
    # name
    if "name" not in data:
        yield at("SK101", "name", "required field `name` is missing")
    else:
        name = data["name"]
        if not isinstance(name, str) or not name.strip():
            yield at("SK102", "name", f"`name` must be a non-empty string, got {shown('name')}",
                     hint=_name_hint(name, fm.sources.get("name"), skill.folder.name))
        else:
            yield from name_findings(name, skill.folder.name,
                                     lambda code, msg, hint=None: at(code, "name", msg, hint=hint))
    # description
    if "description" not in data:
        yield at("SK107", "description", "required field `description` is missing")
    else:
        desc = data["description"]
        if not isinstance(desc, str) or not desc.strip():
            yield at("SK108", "description", f"`description` must be a non-empty string, got {shown('description')}",
                     hint=_value_hint("description", desc, fm.sources.get("description")))
        else:
            if len(desc) > MAX_DESCRIPTION:
                yield at("SK109", "description",
                         f"`description` is {len(desc)} characters; the limit is {MAX_DESCRIPTION}")
            match = PLACEHOLDER_TEXT.search(desc)
            if match:
                yield at("SK202", "description",
                         f"`description` still contains template text: {match.group(0).strip()!r}")


def _check_optional(fm: Frontmatter, at: _At, shown: Callable[[str], str]) -> Iterable[Diagnostic]:
    """The optional fields of the standard."""
    data = fm.data
    if "compatibility" in data:
        comp = data["compatibility"]
        if not isinstance(comp, str) or not comp.strip():
            yield at("SK110", "compatibility", f"`compatibility` must be a non-empty string, got "
                                               f"{shown('compatibility')}",
                     hint=_value_hint("compatibility", comp, fm.sources.get("compatibility")))
        elif len(comp) > MAX_COMPATIBILITY:
            yield at("SK111", "compatibility",
                     f"`compatibility` is {len(comp)} characters; the limit is {MAX_COMPATIBILITY}")
    if "license" in data and not isinstance(data["license"], str):
        yield at("SK114", "license", f"`license` must be a string, got {shown('license')}",
                 hint=_value_hint("license", data["license"], fm.sources.get("license")))
    if "allowed-tools" in data:
        tools = data["allowed-tools"]
        if isinstance(tools, list) and all(isinstance(t, str) for t in tools):
            written = [_unquoted(fm.sources.get(f"allowed-tools[{i}]"), tool) for i, tool in enumerate(tools)]
            hint = f"Write `allowed-tools: {' '.join(t for t in written if t)}`." if tools and all(written) else \
                "Write the tools on one line, separated by spaces."
            yield at("SK115", "allowed-tools", hint=hint)
        elif not isinstance(tools, str):
            yield at("SK116", "allowed-tools", f"`allowed-tools` must be a space-separated string, got "
                                               f"{shown('allowed-tools')}",
                     hint=_value_hint("allowed-tools", tools, fm.sources.get("allowed-tools")))


def _check_yaml_form(skill: Skill, fm: Frontmatter, file: str) -> Iterable[Diagnostic]:
    """YAML the reference validator cannot read: an error where the open standard is the contract."""
    for what, line, column in fm.non_strict:
        yield RULES["SK013"].at(file, line, f"the frontmatter uses {what}", column=column, skill=skill.name)
    if fm.bom:
        yield RULES["SK014"].at(file, 1, "SKILL.md starts with a UTF-8 byte-order mark", skill=skill.name)


def _check_profile_fields(fm: Frontmatter, profile: str, at: _At, shown: Callable[[str], str]) -> Iterable[Diagnostic]:
    data = fm.data
    # fields outside the standard, by profile
    known = set(OPEN_FIELDS) | (set(CLAUDE_FIELDS) if profile != "spec" else set())
    for key in data:
        if key in known:
            continue
        if key in CLAUDE_FIELDS:
            message = f"`{key}` is a Claude Code extension, not part of the open standard"
            hint = "Use `--profile claude-code` for Claude Code skills, or move it under `metadata`."
        else:
            message = f"unknown field `{key}`"
            close = _closest_field(key.replace("_", "-").lower())
            hint = f"Did you mean `{close}`?" if close else "Put registry data under `metadata`."
        yield at("SK120", key, message, hint=hint)
    if profile != "spec":
        for key, (check, expected) in CLAUDE_FIELDS.items():
            if key in data and not check(data[key]):
                yield at("SK122", key, f"`{key}` must be {expected}, got {shown(key)}",
                         hint=_value_hint(key, data[key], fm.sources.get(key)) if check is _is_str else None)
        if "when_to_use" in data:
            yield at("SK123", "when_to_use", "`when_to_use` is deprecated")


@functools.lru_cache(maxsize=4096)
def _closest_field(key: str) -> str | None:
    """The field an unknown key is likely a typo of, kept per key: real skills repeat theirs (`author`, `tags`)."""
    close = difflib.get_close_matches(key, [*OPEN_FIELDS, *CLAUDE_FIELDS], 1, 0.6)
    return close[0] if close else None


def _check_metadata(meta: Any, fm: Frontmatter, config: RegistryConfig,
                    at: Callable[..., Diagnostic]) -> Iterable[Diagnostic]:
    if not isinstance(meta, dict):
        yield at("SK112", "metadata", f"`metadata` must be a mapping, got {_show(meta, fm.sources.get('metadata'))}")
        return
    for key, value in meta.items():
        path = f"metadata.{key}"
        if not isinstance(key, str):
            written = fm.key_sources.get(path)
            yield at("SK112", path, f"`metadata` key {written if written else repr(key)} is not a string",
                     hint=f"Quote it: `\"{written}\"`." if written is not None and _quotable(written) else
                     "Write the key as a quoted string.")
        elif not isinstance(value, str):
            written_items = [fm.sources.get(f"{path}[{i}]") for i in range(len(value))] \
                if isinstance(value, list) else []
            yield at("SK113", path, f"`{path}` must be a string, got {_show(value, fm.sources.get(path))}",
                     hint=_value_hint(key, value, fm.sources.get(path), written_items))
    category = meta.get("category")
    if isinstance(category, str) and config.categories:
        if category not in config.category_slugs:
            yield at("SK301", "metadata.category", f"unknown category `{category}`",
                     hint=category_hint(category, config.category_slugs))
    elif category is None and config.categories:
        yield at("SK305", "metadata", "`metadata.category` is missing")
    tags = meta.get("tags")
    if isinstance(tags, str) or isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        items = [t.strip() for t in (tags.split(",") if isinstance(tags, str) else tags) if t.strip()]
        if len(items) > config.limits.max_tags:
            yield at("SK302", "metadata.tags", f"{len(items)} tags; the limit is {config.limits.max_tags}")
        for tag in items:
            if not SLUG.fullmatch(tag):
                yield at("SK303", "metadata.tags", f"tag {tag!r} is not a lowercase slug",
                         hint=f"Did you mean `{_slugify(tag)}`?" if _slugify(tag) else None)
    version = meta.get("version")
    if isinstance(version, str) and not SEMVER.fullmatch(version):
        yield at("SK304", "metadata.version", f"`metadata.version` {version!r} is not a semantic version")


def category_hint(category: str, slugs: Sequence[str]) -> str:
    """SK301's hint: the slug closest to ``category`` (whatever its case), if one is close, then every slug."""
    close = close_match(category.lower(), slugs, cutoff=0.5)
    return (f"Did you mean `{close}`? " if close else "") + f"Categories: {', '.join(slugs)}."


def _slugify(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")


def _show(value: Any, written: str | None = None) -> str:
    """What YAML read, in words, with the text as the file writes it (never the parsed value: `1.10` is not
    shown as 1.1, nor `yes` as True)."""
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a mapping"
    if isinstance(value, str):
        return f"a string ({value!r})"
    kind = "nothing" if value is None else "a date" if isinstance(value, (datetime.date, datetime.datetime)) else \
        {bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)
    if written is None:
        written = "" if value is None else str(value)
    return f"{kind} ({written})" if written else kind


def _quotable(written: str) -> bool:
    """Whether putting double quotes around the written text gives the same characters as a YAML string."""
    return bool(written) and "\n" not in written and not written.startswith(("!", "&", "*")) and \
        not any(c in written for c in '"\\')


def _unquoted(written: str | None, value: Any) -> str | None:
    """A list item as it would stand inside one string: plain text as written, a quoted string without its
    quotes when that is exactly the text; None when no text from the file fits."""
    if written is None:
        return None
    if written[:1] in ("'", '"'):
        return value if isinstance(value, str) and written[1:-1] == value and _quotable(value) else None
    return written if _quotable(written) else None


def _value_hint(key: str, value: Any, written: str | None, items: Sequence[str | None] = ()) -> str | None:
    """How to write a value that must be a string, quoting only text the file holds; None: the rule's own hint."""
    if isinstance(value, dict):
        return (f"Values here must be strings, not a mapping: write `{key}` as one quoted string, or give each "
                f"of its entries a key of its own.")
    if isinstance(value, list):
        texts = [_unquoted(w, v) for w, v in zip(items, value)]
        if value and len(texts) == len(value) and all(t is not None for t in texts):
            return f"Write one comma-separated string: `{key}: \"{', '.join(t for t in texts if t)}\"`."
        return f"Write the items of `{key}` as one quoted, comma-separated string."
    if not written:
        return f"Write a value after `{key}:` as a quoted string, or delete the line."
    if not _quotable(written):
        return f"Write the value of `{key}` on one line, as a quoted string."
    if value is None:
        return f"Quote it if you mean the text: `{key}: \"{written}\"`; YAML reads `{written}` as no value."
    return f"Quote it: `{key}: \"{written}\"`."


def _name_hint(name: Any, written: str | None, folder: str) -> str:
    """SK102: quote a name YAML read as a number or date when, as a string, it is a valid name (`933133`)."""
    if written and _quotable(written) and NAME_CHARS.fullmatch(written) and len(written) <= MAX_NAME and \
            not (written.startswith("-") or written.endswith("-") or "--" in written):
        match = "" if written == folder else f" (and make it match the folder name `{folder}`)"
        return f"Quote it: `name: \"{written}\"`{match}."
    return f"Write the skill's name, lowercase letters, digits and hyphens, as the folder's: `name: {folder}`."
