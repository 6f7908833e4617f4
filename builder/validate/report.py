"""A validation's report: its findings and their counts (``ValidationReport``, ``Tally``), and the formatters
over them: text for people, JSON for tools, workflow commands for GitHub.

Each formatter writes as the findings arrive (``iter_*`` yield pieces of the output), so a streamed run
(``run.ValidationRun``) never holds them all; ``format_text`` joins the pieces for a finished report.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from ..core.diagnostics import REGISTRY_POLICY, RULES, Diagnostic, Severity
from ..core.model import Skill
from ..core.terminal import visible
from ..core.words import counted
from .grouping import grouped

# 2: findings say whether the baseline holds them (`baselined`), the summary counts those apart, and the
# profile `lenient` is named `agents`.
JSON_VERSION = 2


@dataclass
class Tally:
    """The counts a report closes with, kept as findings stream past."""

    skills: int = 0
    errors: int = 0  # not counting those the baseline holds
    warnings: int = 0  # not counting those the baseline holds
    baselined: int = 0  # findings the registry's baseline holds: known, they fail nothing
    flagged: set[str] = field(default_factory=set)  # names of skills with findings the baseline does not hold

    def count(self, diagnostic: Diagnostic) -> None:
        self.count_all((diagnostic,))

    def count_all(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Count each finding: one loop for a whole report (a rebuild at 60,000 real skills counts 370,000)."""
        flagged, error = self.flagged, Severity.ERROR
        for d in diagnostics:
            if d.baselined:
                self.baselined += 1
                continue
            if d.severity is error:
                self.errors += 1
            else:
                self.warnings += 1
            if d.skill:
                flagged.add(d.skill)

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)

    def summary(self) -> str:
        return (f"{counted(self.errors, 'error')}, {counted(self.warnings, 'warning')} in {len(self.flagged):,} of "
                f"{counted(self.skills, 'skill')}{self.held()}")

    def held(self) -> str:
        """What the closing line adds when the baseline held findings."""
        return f"; {counted(self.baselined, 'known finding')} in the baseline" if self.baselined else ""


@dataclass(frozen=True)
class ValidationReport:
    skills: Sequence[Skill]
    diagnostics: tuple[Diagnostic, ...]

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.diagnostics)

    @functools.cached_property
    def tally(self) -> Tally:
        """Counted once: a build asks for it to decide, and again for the lines it shows."""
        tally = Tally(skills=len(self.skills))
        tally.count_all(self.diagnostics)
        return tally

    @property
    def errors(self) -> int:
        return sum(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity is Severity.WARNING for d in self.diagnostics)

    def failed(self, strict: bool = False) -> bool:
        return self.tally.failed(strict)

    def invalid_names(self) -> frozenset[str]:
        return frozenset(d.skill for d in self.diagnostics if d.severity is Severity.ERROR and d.skill)

    def summary(self) -> str:
        return self.tally.summary()


class Findings(Protocol):
    """Findings in report order, and their counts, complete once iterated (a ValidationReport or Run)."""

    def __iter__(self) -> Iterator[Diagnostic]: ...

    @property
    def tally(self) -> Tally: ...


@dataclass(frozen=True)
class ErrorsOnly:
    """A finished report's errors, closing with all of its counts: what a build that published shows, its
    warnings being in the summary's count and in ``validate``'s report."""

    report: ValidationReport

    def __iter__(self) -> Iterator[Diagnostic]:
        return (d for d in self.report if d.severity is Severity.ERROR)

    @property
    def tally(self) -> Tally:
        return self.report.tally


def summary_line(tally: Tally) -> str:
    """The closing line people read: a clean run says so in words; any finding keeps the counts."""
    count = tally.skills
    if tally.errors or tally.warnings or count == 0:
        return tally.summary()
    valid = "The skill is valid" if count == 1 else f"All {count:,} skills are valid"
    return f"{valid} ({counted(tally.baselined, 'known finding')} in the baseline)." if tally.baselined else \
        valid + "."


# A list of skills in a summary line names this many, then says how many more.
NAMED = 5


def named(names: Sequence[str], verbose: bool = False) -> str:
    """``names`` for one line: all of them with ``verbose``, else the first few and how many more."""
    if verbose or len(names) <= NAMED:
        return ", ".join(names)
    return f"{', '.join(names[:NAMED])} and {len(names) - NAMED:,} more (--verbose lists them)"


def _by_rule(seen: Collection[tuple[str, str]]) -> str:
    """How many skills have findings of each rule, most first, from the (rule, skill) pairs ``seen``: `SK113 in
    80, SK120 in 4`."""
    counts = Counter(code for code, _ in seen)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{code} in {count:,}" for code, count in ranked[:NAMED])
    return shown + (f" and {counted(len(ranked) - NAMED, 'more rule')}" if len(ranked) > NAMED else "")


def outcome_lines(report: ValidationReport, published: Sequence[str], left_out: Sequence[str],
                  verbose: bool = False) -> list[str]:
    """What a build's summary says before its closing line: the skills published with warnings and those left
    out, one line each, with the rules why (how many skills each rule is found in). One pass over the findings:
    a rebuild at 60,000 real skills shows these lines over 370,000 of them."""
    names, out = set(published), set(left_out)
    warned: set[tuple[str, str]] = set()  # (rule, skill) of each warning of a published skill
    errors: set[tuple[str, str]] = set()  # (rule, skill) of each error of a skill left out
    known: set[str] = set()  # skills with errors the baseline holds
    error = Severity.ERROR
    for d in report.diagnostics:
        if d.severity is error:
            if d.baselined:
                known.add(d.skill)
            if d.skill in out:
                errors.add((d.code, d.skill))
        elif d.skill in names:
            warned.add((d.code, d.skill))
    lines = []
    if warned:
        count = len({skill for _, skill in warned})
        lines.append(f"Published with warnings: {counted(count, 'skill')} of {len(published):,} "
                     f"({_by_rule(warned)})" + ("" if verbose else "; `skillreg validate` or --verbose shows them"))
    if left_out:
        held = sum(name in known for name in left_out)
        note = f"; {held:,} of them with errors the baseline holds" if held else ""
        lines.append(f"Left out {counted(len(left_out), 'invalid skill')}: {named(left_out, verbose)} "
                     f"(errors: {_by_rule(errors)}{note})")
    return lines


def origin(d: Diagnostic) -> str:
    """What people read after a finding of registry policy: which switch in registry.yaml asks for it. Findings
    of the open standard and of skillreg itself say nothing more (JSON names every finding's ``source``)."""
    rule = RULES[d.code]
    return f" (registry policy `{rule.policy}`, registry.yaml)" if rule.source == REGISTRY_POLICY else ""


def iter_text(findings: Findings, *, verbose: bool = False) -> Iterator[str]:
    """One finding a line, each skill's findings of one rule once (``grouping``), a hint only the first time it
    is given; every finding and every hint with ``verbose``."""
    hinted: set[str] = set()
    for shown in grouped(findings, verbose=verbose):
        d = shown.finding
        where = d.file + (f":{d.line}" if d.line else "") + (f":{d.column}" if d.line and d.column else "")
        line = visible(f"{where}: {d.severity.value} {d.code} {d.message}{origin(d)}{shown.note()}") + "\n"
        fresh = bool(d.hint) and (verbose or d.hint not in hinted)
        hinted.add(d.hint)
        yield line + (f"    hint: {visible(d.hint)}\n" if fresh else "")
    yield summary_line(findings.tally) + "\n"


def format_text(report: Findings, *, verbose: bool = False) -> str:
    return "".join(iter_text(report, verbose=verbose))


def _dumps(value: Any, indent: str) -> str:
    """``value`` as ``json.dumps(..., indent=2)`` writes it when nested at ``indent``."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).replace("\n", "\n" + indent)


def iter_json(findings: Findings, profile: str, extra: dict[str, Any] | None = None) -> Iterator[str]:
    """The documented shape of ``validate --format json`` (schema: builder/publish/schemas/validate.schema.json),
    byte for byte what ``json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\\n"`` gives, written
    one finding at a time: the keys before ``diagnostics`` (``extra``, e.g. ``changed_since``) first, the
    counts after."""
    extra = extra or {}
    assert all(key < "diagnostics" for key in extra), "keys after `diagnostics` would need every finding first"
    yield "{\n" + "".join(f"  {json.dumps(key)}: {_dumps(extra[key], '  ')},\n" for key in sorted(extra))
    empty = True
    for d in findings:
        yield ('  "diagnostics": [\n' if empty else ",\n") + "    " + _dumps(d.to_dict(), "    ")
        empty = False
    yield '  "diagnostics": [],\n' if empty else "\n  ],\n"
    tally = findings.tally
    tail = {"profile": profile, "version": JSON_VERSION,
            "summary": {"errors": tally.errors, "warnings": tally.warnings, "baselined": tally.baselined,
                        "skills": tally.skills,
                        "skills_with_findings": len(tally.flagged)}}
    yield ",\n".join(f"  {json.dumps(key)}: {_dumps(tail[key], '  ')}" for key in sorted(tail)) + "\n}\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(d: Diagnostic, note: str = "") -> str:
    """One workflow command (GitHub shows it as an annotation on the pull request); a finding the baseline
    holds is a notice, which fails nothing."""
    props = [f"file={_escape_property(d.file)}"]
    if d.line:
        props.append(f"line={d.line}")
    if d.column:
        props.append(f"col={d.column}")
    props.append(f"title={_escape_property(d.code)}")
    message = d.message + origin(d) + note + (f" ({d.hint})" if d.hint else "")
    level = "notice" if d.baselined else d.severity.value
    return f"::{level} {','.join(props)}::{_escape_data(message)}\n"


def iter_github(findings: Findings, rows: TextIO | None = None, *, verbose: bool = False) -> Iterator[str]:
    """The workflow commands, grouped as the text is (``grouping``); with ``rows`` (a temporary file), each
    shown finding's job-summary row is written there on the way, to be appended to the summary once the closing
    counts are known."""
    for shown in grouped(findings, verbose=verbose):
        if rows is not None:
            rows.write(summary_row(shown.finding, shown.note()))
        yield github_line(shown.finding, shown.note())
    yield summary_line(findings.tally) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_row(d: Diagnostic, note: str = "") -> str:
    """One finding as a row of the job summary's table."""
    return (f"| {d.severity.value} | {d.code} | `{_cell(d.file)}` | {d.line or ''} | "
            f"{_cell(d.message + origin(d) + note)}{' — ' + _cell(d.hint) if d.hint else ''} |\n")


def summary_head(summary: str, has_rows: bool) -> str:
    """The job summary's section above its table of findings (``summary_row``), which unlike annotations has
    no cap."""
    out = f"## Skill validation\n\n{summary}\n\n"
    return out + ("| Severity | Code | File | Line | Message |\n| --- | --- | --- | --- | --- |\n" if has_rows else "")
