"""Formatters over a list of findings: text for people, JSON for tools, workflow commands for GitHub."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..core.diagnostics import REGISTRY_POLICY, RULES, Diagnostic
from ..core.terminal import visible
from .checks import ValidationReport

JSON_VERSION = 1


def summary_line(report: ValidationReport) -> str:
    """The closing line people read: a clean run says so in words; any finding keeps the counts."""
    count = len(report.skills)
    if report.diagnostics or count == 0:
        return report.summary()
    return "The skill is valid." if count == 1 else f"All {count:,} skills are valid."


def origin(d: Diagnostic) -> str:
    """What people read after a finding of registry policy: which switch in registry.yaml asks for it. Findings
    of the open standard and of skillreg itself say nothing more (JSON names every finding's ``source``)."""
    rule = RULES[d.code]
    return f" (registry policy `{rule.policy}`, registry.yaml)" if rule.source == REGISTRY_POLICY else ""


def format_text(report: ValidationReport) -> str:
    lines = []
    for d in report.diagnostics:
        where = d.file + (f":{d.line}" if d.line else "") + (f":{d.column}" if d.line and d.column else "")
        lines.append(visible(f"{where}: {d.severity.value} {d.code} {d.message}{origin(d)}"))
        if d.hint:
            lines.append(f"    hint: {visible(d.hint)}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def to_json(report: ValidationReport, profile: str) -> dict[str, object]:
    """The documented shape of ``validate --format json`` (schema: builder/publish/schemas/validate.schema.json)."""
    return {
        "version": JSON_VERSION,
        "profile": profile,
        "summary": {
            "errors": report.errors,
            "warnings": report.warnings,
            "skills": len(report.skills),
            "skills_with_findings": len({d.skill for d in report.diagnostics if d.skill}),
        },
        "diagnostics": [d.to_dict() for d in report.diagnostics],
    }


def format_json(report: ValidationReport, profile: str) -> str:
    return json.dumps(to_json(report, profile), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(report: ValidationReport) -> str:
    """One workflow command per finding (GitHub shows them as annotations on the pull request)."""
    lines = []
    for d in report.diagnostics:
        props = [f"file={_escape_property(d.file)}"]
        if d.line:
            props.append(f"line={d.line}")
        if d.column:
            props.append(f"col={d.column}")
        props.append(f"title={_escape_property(d.code)}")
        message = d.message + origin(d) + (f" ({d.hint})" if d.hint else "")
        lines.append(f"::{d.severity.value} {','.join(props)}::{_escape_data(message)}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_markdown(diagnostics: Sequence[Diagnostic], summary: str) -> str:
    """A Markdown table of every finding for the job summary, which (unlike annotations) has no cap."""
    out = ["## Skill validation", "", summary, ""]
    if diagnostics:
        out += ["| Severity | Code | File | Line | Message |", "| --- | --- | --- | --- | --- |"]
        for d in diagnostics:
            out.append(f"| {d.severity.value} | {d.code} | `{_cell(d.file)}` | {d.line or ''} | "
                       f"{_cell(d.message + origin(d))}{' — ' + _cell(d.hint) if d.hint else ''} |")
        out.append("")
    return "\n".join(out) + "\n"
