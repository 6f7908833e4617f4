"""Generated skill folders to benchmark against, the same bytes for the same seed, in one of two shapes:
``synthetic`` (the corpus of the figures up to 2026-11) or ``real`` (the sizes, files, links and code blocks
measured on public skills; ``measure_shape`` reads those figures back from any corpus).

Skill ``i`` depends only on ``(seed, i)``, so the first 100 skills of a 1,000-skill corpus equal a 100-skill
corpus. Every generated skill is valid under the ``spec`` profile and under skills-ref. A cached corpus is a
registry of its own: ``registry.yaml`` (a copy of this repository's) beside the ``skills/`` folder, so
``skillreg --config <corpus>/registry.yaml build`` builds it.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import re
import shutil
import statistics
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent

SHAPES = ("synthetic", "real")  # synthetic: the corpus of the figures up to 2026-11; real: see REAL_TARGET

SKILL_MD_BYTES = (2 * 1024, 8 * 1024)
EXTRA_FILE_BYTES = (1024, 50 * 1024)
ASSET_BYTES = (512, 8 * 1024)
DESCRIPTION_CHARS = (80, 400)
MAX_EXTRA_FILES = 4
ASSET_EVERY = 10  # about one skill in ten carries a binary asset
# Weights for 0, 1, 2, 3 and 4 extra files: most skills have one or two.
EXTRA_FILE_WEIGHTS = (20, 30, 25, 15, 10)
SLACK = 1024  # bytes a generated text file may run past its drawn size to end on a whole line

WORDS = ["access", "account", "action", "adapter", "agent", "alert", "analysis", "annotation", "api", "archive", "argument", "artifact", "asset", "audit", "author", "backup", "badge", "baseline", "batch", "benchmark", "binary", "branch", "bucket", "buffer", "build", "bundle", "cache", "call", "canary", "category", "change", "channel", "check", "checklist", "chunk", "client", "cluster", "column", "command", "comment", "commit", "compiler", "config", "container", "context", "contract", "coverage", "credential", "cron", "cursor", "dashboard", "data", "dataset", "date", "debug", "decision", "default", "dependency", "deploy", "diff", "digest", "directory", "document", "domain", "draft", "driver", "encoding", "endpoint", "entry", "environment", "error", "event", "example", "export", "expression", "extension", "feature", "feed", "field", "file", "filter", "fixture", "flag", "folder", "format", "function", "gateway", "glossary", "grammar", "graph", "guide", "handler", "hash", "header", "heading", "history", "hook", "host", "image", "import", "incident", "index", "input", "install", "interface", "issue", "item", "job", "journal", "key", "label", "language", "layer", "layout", "lesson", "library", "license", "limit", "line", "link", "lint", "list", "locale", "lock", "log", "loop", "manifest", "map", "marker", "matrix", "merge", "message", "method", "metric", "migration", "mirror", "model", "module", "monitor", "mutation", "namespace", "network", "node", "note", "notebook", "object", "option", "order", "outline", "output", "owner", "package", "page", "parser", "patch", "path", "pattern", "payload", "permission", "pipeline", "plan", "platform", "plugin", "policy", "port", "preview", "profile", "project", "prompt", "property", "protocol", "provider", "query", "queue", "quota", "range", "rate", "record", "recipe", "reference", "region", "registry", "release", "report", "repository", "request", "resource", "response", "result", "review", "revision", "role", "rollback", "route", "rule", "runtime", "sample", "schema", "scope", "screen", "script", "search", "secret", "section", "segment", "selector", "sequence", "server", "service", "session", "setting", "shard", "signal", "snapshot", "source", "spec", "stage", "state", "status", "step", "storage", "stream", "string", "style", "summary", "survey", "switch", "symbol", "table", "tag", "task", "team", "template", "tenant", "term", "test", "thread", "ticket", "timeline", "token", "tool", "topic", "trace", "transaction", "trigger", "type", "unit", "update", "upload", "usage", "user", "value", "variable", "vendor", "version", "view", "volume", "warning", "webhook", "widget", "window", "workflow", "workspace"]

VERBS = ["analyse", "audit", "build", "check", "clean", "collect", "compare", "convert", "create", "debug", "deploy", "document", "draft", "explain", "export", "extract", "find", "format", "generate", "group", "import", "index", "inspect", "label", "lint", "list", "map", "measure", "merge", "migrate", "monitor", "normalise", "organise", "parse", "plan", "prepare", "profile", "publish", "refactor", "rename", "report", "resolve", "review", "rewrite", "scan", "schedule", "search", "sort", "split", "summarise", "sync", "test", "track", "trace", "translate", "triage", "update", "validate", "verify"]

ADJECTIVES = ["stale", "broken", "noisy", "large", "nested", "flaky", "slow", "duplicate", "missing", "unused", "legacy", "private", "public", "shared", "local", "remote", "failing", "pending", "draft", "partial", "empty", "unknown", "outdated", "deprecated", "risky", "sensitive", "minimal", "verbose"]

SITUATIONS = (
    "the user asks to {verb} {adj} {nouns}",
    "a pull request touches {noun} or {noun2} files",
    "someone reports {adj} {nouns} in the {noun2}",
    "the {noun} needs a new {noun2} before release",
    "the {noun} {noun2} is {adj} or hard to read",
    "working with {adj} {noun} data",
    "preparing a {noun} for review",
)

FIRST_NAMES = ["Ada", "Alan", "Barbara", "Chen", "Dana", "Edsger", "Fatima", "Grace", "Hamid", "Ines", "Jun", "Katherine", "Linus", "Margaret", "Nia", "Omar"]
LAST_NAMES = ["Hopper", "Lovelace", "Turing", "Liskov", "Ritchie", "Thompson", "Okafor", "Tanaka", "Novak", "Silva", "Haddad", "Berg", "Kowalski"]

SHELL_COMMANDS = ("git", "grep", "sed", "awk", "find", "sort", "uniq", "wc", "curl", "jq", "python3", "tar")


def category_slugs(config: Path = REPO / "registry.yaml") -> tuple[str, ...]:
    """The category slugs of registry.yaml, so generated skills pass the registry's category rule."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    return tuple(c["slug"] for c in data["categories"])


def skill_name(i: int, n: int, rng: random.Random) -> str:
    width = max(5, len(str(max(n - 1, 0))))
    return f"skill-{i:0{width}d}-{rng.choice(WORDS)}"


def generate(root: Path, n: int, seed: int = 0, shape: str = "synthetic") -> list[Path]:
    """Write ``n`` skill folders below ``root`` (created if needed) and return them in name order.

    ``shape`` is ``synthetic`` (the corpus earlier figures were measured on) or ``real`` (sizes, files, links
    and code blocks drawn to match public skills; see REAL_TARGET).
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown corpus shape {shape!r}; expected one of {', '.join(SHAPES)}")
    write = _write_skill if shape == "synthetic" else _write_real_skill
    root.mkdir(parents=True, exist_ok=True)
    categories = category_slugs()
    folders = []
    for i in range(n):
        folders.append(write(root, i, n, seed, categories))
    return folders


def _write_skill(root: Path, i: int, n: int, seed: int, categories: tuple[str, ...]) -> Path:
    rng = random.Random(f"skill-corpus:{seed}:{i}")
    name = skill_name(i, n, rng)
    folder = root / name
    extras = _extra_files(rng)
    if rng.randrange(ASSET_EVERY) == 0:
        extras.append(_asset(rng))
    for rel, data, executable in extras:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, 0o755 if executable else 0o644)
    skill_md = _skill_md(rng, name, categories, [rel for rel, _, _ in extras])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_bytes(skill_md)
    os.chmod(folder / "SKILL.md", 0o644)
    return folder


# --- SKILL.md ---------------------------------------------------------------------------------------------------

def _plural(word: str) -> str:
    """Third person of a verb or plural of a noun, close enough for generated prose."""
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _sentence(rng: random.Random, low: int = 6, high: int = 16) -> str:
    words = rng.choices(WORDS, k=rng.randint(low, high))
    if rng.random() < 0.5:
        words.insert(1, _plural(rng.choice(VERBS)))
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _situation(rng: random.Random) -> str:
    return rng.choice(SITUATIONS).format(verb=rng.choice(VERBS), adj=rng.choice(ADJECTIVES), noun=rng.choice(WORDS),
                                         nouns=_plural(rng.choice(WORDS)), noun2=rng.choice(WORDS))


def description(rng: random.Random) -> str:
    """What and when, in the usual shape ("Checks ... Use when ..."), 80-400 characters of plain words."""
    low, high = DESCRIPTION_CHARS
    target = rng.randint(low, high)
    text = (f"{_plural(rng.choice(VERBS)).capitalize()} {rng.choice(ADJECTIVES)} {_plural(rng.choice(WORDS))} "
            + " ".join(rng.choices(WORDS, k=rng.randint(3, 8))) + f". Use when {_situation(rng)}")
    while True:
        more = f", or when {_situation(rng)}"
        if len(text) + len(more) + 1 > target:
            break
        text += more
    text += "."
    if len(text) > high:  # only when the first clause alone overshoots a short target
        text = text[: high - 1].rsplit(" ", 1)[0].rstrip(",") + "."
    while len(text) < low:
        text += " " + _sentence(rng, 3, 6)
    return text


def _frontmatter(rng: random.Random, name: str, categories: tuple[str, ...]) -> str:
    tags = sorted(set(rng.sample(WORDS, rng.randint(1, 5))))
    version = f"{rng.randint(0, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 40)}"
    author = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    return (
        "---\n"
        f"name: {name}\n"
        f"description: {description(rng)}\n"
        "license: MIT\n"
        "metadata:\n"
        f"  category: {rng.choice(categories)}\n"
        f"  tags: {', '.join(tags)}\n"
        f"  version: \"{version}\"\n"
        f"  author: {author}\n"
        "---\n"
    )


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 5))) + "\n\n"


def _list_block(rng: random.Random) -> str:
    ordered = rng.random() < 0.5
    items = [f"{k + 1}. " if ordered else "- " for k in range(rng.randint(3, 7))]
    return "".join(f"{marker}{_sentence(rng, 4, 12)}\n" for marker in items) + "\n"


def _code_block(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(2, 8)):
        cmd = rng.choice(SHELL_COMMANDS)
        args = " ".join(f"--{rng.choice(WORDS)}" if rng.random() < 0.3 else rng.choice(WORDS)
                        for _ in range(rng.randint(1, 4)))
        lines.append(f"{cmd} {args}")
    return "```bash\n" + "\n".join(lines) + "\n```\n\n"


def _section(rng: random.Random) -> str:
    heading = f"## {rng.choice(VERBS).capitalize()} the {rng.choice(WORDS)}\n\n"
    blocks = [_paragraph, _list_block, _code_block]
    return heading + "".join(rng.choice(blocks)(rng) for _ in range(rng.randint(1, 3)))


def _skill_md(rng: random.Random, name: str, categories: tuple[str, ...], extras: list[str]) -> bytes:
    low, high = SKILL_MD_BYTES
    head = _frontmatter(rng, name, categories)
    title = " ".join(w.capitalize() for w in name.split("-")[2:] + [rng.choice(WORDS)])
    head += f"# {title}\n\n" + _paragraph(rng)
    head += "## When to use\n\n" + "".join(f"- {_situation(rng).capitalize()}.\n" for _ in range(rng.randint(2, 4)))
    head += "\n"
    if extras:
        head += "## Files\n\n"
        for rel in extras:
            label = "![diagram]" if rel.startswith("assets/") else f"[{rel}]"
            head += f"- {label}({rel}): {_sentence(rng, 4, 9)}\n"
        head += "\n"
    # Whole sections fill the file up to a drawn target; one that would overshoot it ends the file, unless the
    # file is still under the minimum, in which case another (smaller) section is drawn instead.
    target = rng.randint(low + 1024, high)
    body = head
    while True:
        section = _section(rng)
        if len(body) + len(section) > target:
            if len(body) >= low:
                break
            continue
        body += section
    return body.encode("ascii")


# --- extra files ------------------------------------------------------------------------------------------------

def _size(rng: random.Random) -> int:
    """Log-uniform in the extra-file range, so small files are common and large ones rare, as in real skills.

    Files are generated to at least this size and end at a line (or function) boundary, which adds at most
    ``SLACK`` bytes; the draw leaves room for that.
    """
    low, high = EXTRA_FILE_BYTES
    return int(low * ((high - SLACK) / low) ** rng.random())


def _end_of_line(text: str, size: int) -> bytes:
    """``text`` cut at the end of the line holding byte ``size``: at least ``size`` bytes, whole lines only."""
    cut = text.find("\n", size - 1)
    return (text if cut < 0 else text[: cut + 1]).encode("ascii")


def _python_script(rng: random.Random, size: int) -> bytes:
    text = f'#!/usr/bin/env python3\n"""{_sentence(rng)}"""\n\nimport argparse\nimport json\nimport sys\n'
    tail = ("\n\ndef main(argv=None):\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument(\"path\")\n    args = parser.parse_args(argv)\n"
            "    json.dump({\"path\": args.path}, sys.stdout)\n    return 0\n\n\n"
            "if __name__ == \"__main__\":\n    sys.exit(main())\n")
    k = 0
    while len(text) + len(tail) < size:
        arg = f"{rng.choice(WORDS)}_items"
        text += (f"\n\ndef {rng.choice(VERBS)}_{rng.choice(WORDS)}_{k}({arg}):\n"
                 f"    \"\"\"{_sentence(rng, 4, 10)}\"\"\"\n"
                 f"    result = []\n    for item in {arg}:\n"
                 f"        if item.get(\"{rng.choice(WORDS)}\"):\n"
                 f"            result.append(item[\"{rng.choice(WORDS)}\"])\n"
                 f"    return result\n")
        k += 1
    return (text + tail).encode("ascii")


def _shell_script(rng: random.Random, size: int) -> bytes:
    text = "#!/usr/bin/env bash\n# " + _sentence(rng) + "\nset -euo pipefail\n\n"
    while len(text) < size:
        var = rng.choice(WORDS).upper()
        text += (f"{var}=\"${{1:-{rng.choice(WORDS)}}}\"\n"
                 f"if [ -n \"${var}\" ]; then\n  {rng.choice(SHELL_COMMANDS)} {rng.choice(WORDS)} \"${var}\"\nfi\n")
    return _end_of_line(text, size)


def _reference(rng: random.Random, size: int) -> bytes:
    text = f"# {rng.choice(WORDS).capitalize()} reference\n\n" + _paragraph(rng)
    while len(text) < size:
        text += _section(rng)
    return _end_of_line(text, size)


def _extra_files(rng: random.Random) -> list[tuple[str, bytes, bool]]:
    count = rng.choices(range(MAX_EXTRA_FILES + 1), weights=EXTRA_FILE_WEIGHTS)[0]
    files: dict[str, tuple[bytes, bool]] = {}
    while len(files) < count:
        kind = rng.choice(("py", "sh", "md", "md"))
        stem = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        size = _size(rng)
        if kind == "py":
            files[f"scripts/{stem.replace('-', '_')}.py"] = (_python_script(rng, size), True)
        elif kind == "sh":
            files[f"scripts/{stem}.sh"] = (_shell_script(rng, size), True)
        else:
            files[f"references/{stem}.md"] = (_reference(rng, size), False)
    return [(rel, data, executable) for rel, (data, executable) in sorted(files.items())]


def _asset(rng: random.Random) -> tuple[str, bytes, bool]:
    """A small PNG-shaped file of random bytes: binary, so it is published base64-encoded."""
    size = rng.randint(*ASSET_BYTES)
    header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    return f"assets/{rng.choice(WORDS)}.png", header + rng.randbytes(size - len(header)), False


# --- real shape -------------------------------------------------------------------------------------------------
# The shape of public skills as measured in issues 14 and 17: over a 3,000-skill random sample of the largest
# public registry, 8.2 KB and 2.0 files per skill on average (median 6.2 KB, 99th percentile 36 KB), SKILL.md
# median 5.6 KB; over 2,918 public SKILL.md files, median 166 lines, 3.2 link constructs and 7.2 fenced code
# blocks per file on average, nearly every file with at least one link. ``measure_shape`` reads these figures
# back from a corpus, and tests/project/test_bench.py holds the generator to them.

KB = 1024
REAL_TARGET = {"mean_skill_kb": 8.2, "median_skill_kb": 6.2, "p99_skill_kb": 36.0, "mean_files": 2.0,
               "median_skill_md_kb": 5.6, "median_skill_md_lines": 166, "mean_links": 3.2,
               "mean_fenced_blocks": 7.2}
# A log-normal whose median is 6.2 KB and mean 8.2 KB: sigma = sqrt(2 ln(8.2 / 6.2)); its 99th percentile is then
# 35.4 KB, next to the measured 36 KB, so one distribution fits all three figures.
REAL_SIZE_MEDIAN = 6.2 * KB
REAL_SIZE_SIGMA = math.sqrt(2 * math.log(8.2 / 6.2))
# Extra files per skill (0 to 8): most skills are SKILL.md alone, a few carry many files; mean about 1.0.
REAL_EXTRA_COUNTS = (0, 1, 2, 3, 4, 5, 6, 8)
REAL_EXTRA_WEIGHTS = (55, 20, 10, 6, 4, 2.5, 1.5, 1)
# SKILL.md stays under the validator's 500 body lines and 5,000 words (SK401, SK402 warn, and a benchmark corpus
# must validate clean): a larger skill keeps the rest of its bytes in references/, as the standard advises.
REAL_SKILL_MD_BYTES = (1200, 18 * KB)
REAL_MAX_BODY_LINES = 470
REAL_MIN_EXTRA_BYTES = 160
# Fenced code blocks per SKILL.md grow with its size, REAL_FENCED_BLOCKS for a SKILL.md of
# REAL_MEAN_SKILL_MD_BYTES: calibrated on generated corpora of 1,000 and 2,000 skills to average 7.2. They fill
# at most REAL_MAX_CODE_LINES of the body, so the largest files keep room for prose.
REAL_MEAN_SKILL_MD_BYTES = 6.95 * KB
REAL_FENCED_BLOCKS = 7.2
REAL_MAX_CODE_LINES = 300
# External links per SKILL.md besides the links to the skill's own files (mean about 2.0).
REAL_EXTERNAL_COUNTS = (0, 1, 2, 3, 4, 6)
REAL_EXTERNAL_WEIGHTS = (8, 33, 30, 17, 8, 4)
REAL_REFERENCE_LINK_SHARE = 0.15  # files with one reference-style link and its definition
FENCE_INFOS = ("bash", "bash", "bash", "python", "python", "md", "json", "yaml", "text", "")
HOSTS = ("https://docs.python.org/3/library", "https://developer.mozilla.org/en-US/docs/Web",
         "https://git-scm.com/docs", "https://docs.github.com/en/actions", "https://peps.python.org",
         "https://www.rfc-editor.org/rfc", "https://kubernetes.io/docs/concepts", "https://example.com/guides")


def _write_real_skill(root: Path, i: int, n: int, seed: int, categories: tuple[str, ...]) -> Path:
    rng = random.Random(f"skill-corpus-real:{seed}:{i}")
    name = skill_name(i, n, rng)
    folder = root / name
    total = int(REAL_SIZE_MEDIAN * math.exp(rng.gauss(0.0, REAL_SIZE_SIGMA)))
    count = rng.choices(REAL_EXTRA_COUNTS, weights=REAL_EXTRA_WEIGHTS)[0]
    low, high = REAL_SKILL_MD_BYTES
    if count == 0 and total > high:
        count = 1
    md_target = total if count == 0 else int(total * rng.uniform(0.65, 0.95))
    md_target = max(low, min(high, md_target))
    extras = _real_extra_files(rng, count, max(total - md_target, 0))
    for rel, data, executable in extras:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, 0o755 if executable else 0o644)
    skill_md = _real_skill_md(rng, name, categories, [rel for rel, _, _ in extras], md_target)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_bytes(skill_md)
    os.chmod(folder / "SKILL.md", 0o644)
    return folder


def _real_extra_files(rng: random.Random, count: int, budget: int) -> list[tuple[str, bytes, bool]]:
    """``count`` files sharing ``budget`` bytes unevenly: references and scripts, now and then a PNG asset."""
    weights = [rng.random() + 0.05 for _ in range(count)]
    files: dict[str, tuple[bytes, bool]] = {}
    for weight in weights:
        size = max(REAL_MIN_EXTRA_BYTES, int(budget * weight / sum(weights)))
        kind = rng.choices(("md", "py", "sh", "png"), weights=(50, 25, 15, 10))[0]
        stem = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        while any(stem in rel or stem.replace("-", "_") in rel for rel in files):
            stem += f"-{rng.choice(WORDS)}"
        if kind == "py":
            files[f"scripts/{stem.replace('-', '_')}.py"] = (_python_script(rng, size), True)
        elif kind == "sh":
            files[f"scripts/{stem}.sh"] = (_shell_script(rng, size), True)
        elif kind == "png":
            header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
            files[f"assets/{stem}.png"] = (header + rng.randbytes(max(size - len(header), 64)), False)
        else:
            files[f"references/{stem}.md"] = (_real_reference(rng, size), False)
    return [(rel, data, executable) for rel, (data, executable) in sorted(files.items())]


def _real_reference(rng: random.Random, size: int) -> bytes:
    text = f"# {rng.choice(WORDS).capitalize()} reference\n\n" + _real_paragraph(rng)
    while True:  # blocks up to ``size``, the last one kept when it ends nearer to it than without it
        block = rng.choice((_real_heading, _real_paragraph, _real_list, _real_table, _real_code))(rng)
        if len(text) + len(block) // 2 > size:
            return text.encode("ascii")
        text += block


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw by Knuth's product of uniforms: small means only, which is all this needs."""
    limit, product, k = math.exp(-mean), rng.random(), 0
    while product > limit:
        product *= rng.random()
        k += 1
    return k


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def _real_heading(rng: random.Random) -> str:
    level = "###" if rng.random() < 0.35 else "##"
    return f"{level} {rng.choice(VERBS).capitalize()} the {rng.choice(WORDS)}\n\n"


def _real_paragraph(rng: random.Random, long: bool = False) -> str:
    """Prose of one to three sentences, hard-wrapped at 80 columns in about half the files' paragraphs; a
    ``long`` paragraph is one unwrapped line, as large SKILL.md files tend to have."""
    text = " ".join(_sentence(rng) for _ in range(rng.randint(3, 7) if long else rng.randint(1, 3)))
    if not long and rng.random() < 0.5:
        return "\n".join(textwrap.wrap(text, 80)) + "\n\n"
    return text + "\n\n"


def _real_list(rng: random.Random) -> str:
    ordered = rng.random() < 0.35
    lines = []
    for k in range(rng.randint(2, 6)):
        marker = f"{k + 1}. " if ordered else "- "
        lines.append(f"{marker}{_sentence(rng, 3, 9)}")
        if rng.random() < 0.2:  # a nested list, indented by two or by four spaces
            indent = " " * (len(marker) if ordered else rng.choice((2, 4)))
            lines += [f"{indent}- {_words(rng, 2, 6)}" for _ in range(rng.randint(1, 3))]
    return "\n".join(lines) + "\n\n"


def _real_table(rng: random.Random) -> str:
    columns = rng.randint(2, 4)
    header = [rng.choice(WORDS).capitalize() for _ in range(columns)]
    rows = [[f"`{rng.choice(WORDS)}`"] + [_words(rng, 1, 4) for _ in range(columns - 1)]
            for _ in range(rng.randint(2, 6))]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * columns]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n\n"


def _real_code(rng: random.Random) -> str:
    info = rng.choice(FENCE_INFOS)
    k = rng.randint(2, 9)
    if info == "python":
        arg = rng.choice(WORDS)
        lines = [f"from {rng.choice(WORDS)} import {rng.choice(VERBS)}_{rng.choice(WORDS)}", "",
                 f"def {rng.choice(VERBS)}_{rng.choice(WORDS)}({arg}):"]
        lines += [f"    {rng.choice(WORDS)} = {arg}.get(\"{rng.choice(WORDS)}\")" for _ in range(k)]
        lines.append(f"    return {arg}")
    elif info == "md":
        lines = [f"## {rng.choice(WORDS).capitalize()}", ""] + [f"- {_words(rng, 2, 6)}" for _ in range(k)]
    elif info == "json":
        lines = ["{"] + [f"  \"{rng.choice(WORDS)}_{j}\": \"{rng.choice(WORDS)}\"," for j in range(k)]
        lines[-1] = lines[-1].rstrip(",")
        lines.append("}")
    elif info == "yaml":
        lines = [f"{rng.choice(WORDS)}:"] + [f"  {rng.choice(WORDS)}_{j}: {rng.choice(WORDS)}" for j in range(k)]
    elif info == "text":
        lines = [_words(rng, 3, 8) for _ in range(k)]
    else:
        lines = [f"{rng.choice(SHELL_COMMANDS)} {_words(rng, 1, 3)}" for _ in range(k)]
        if info == "bash" and rng.random() < 0.3:
            lines.insert(0, f"# {_words(rng, 2, 6)}")
    return f"```{info}\n" + "\n".join(lines) + "\n```\n\n"


def _external_link(rng: random.Random) -> str:
    label = _words(rng, 1, 3)
    return f"[{label}]({rng.choice(HOSTS)}/{rng.choice(WORDS)}-{rng.choice(WORDS)})"


def _own_link(rng: random.Random, rel: str) -> str:
    if rel.startswith("assets/"):
        return f"![{_words(rng, 1, 3)}]({rel})"
    target = ("./" if rng.random() < 0.15 else "") + rel
    if rel.endswith(".md") and rng.random() < 0.15:
        target += f"#{rng.choice(WORDS)}"
    return f"[{rel.rsplit('/', 1)[-1] if rng.random() < 0.5 else _words(rng, 1, 3)}]({target})"


def _with_link(rng: random.Random, link: str) -> str:
    """A paragraph or list item carrying ``link`` in the middle of its prose."""
    if rng.random() < 0.4:
        return f"- {_sentence(rng, 2, 6)[:-1]} {link}: {_sentence(rng, 3, 8)}\n\n"
    return f"{_sentence(rng)} See {link} for {_words(rng, 2, 5)}. {_sentence(rng)}\n\n"


def _real_skill_md(rng: random.Random, name: str, categories: tuple[str, ...], extras: list[str],
                   target: int) -> bytes:
    head = _frontmatter(rng, name, categories)
    title = " ".join(w.capitalize() for w in name.split("-")[2:] + [rng.choice(WORDS)])
    head += f"# {title}\n\n" + _real_paragraph(rng)
    # The blocks that carry the measured constructs, placed among filler blocks in a random order.
    carriers = [_real_code(rng) for _ in range(_poisson(rng, REAL_FENCED_BLOCKS * target / REAL_MEAN_SKILL_MD_BYTES))]
    while sum(block.count("\n") for block in carriers) > REAL_MAX_CODE_LINES:
        carriers.pop()
    carriers += [_with_link(rng, _own_link(rng, rel)) for rel in extras]
    carriers += [_with_link(rng, _external_link(rng))
                 for _ in range(rng.choices(REAL_EXTERNAL_COUNTS, weights=REAL_EXTERNAL_WEIGHTS)[0])]
    definitions = ""
    if rng.random() < REAL_REFERENCE_LINK_SHARE:
        ref = rng.choice(WORDS)
        carriers.append(_with_link(rng, f"[the {ref} notes][{ref}]"))
        definitions = f"[{ref}]: {rng.choice(HOSTS)}/{ref}\n"
    long = target > 10 * KB  # large files: unwrapped paragraphs keep them under the line limit
    filler = (_real_paragraph, _real_paragraph, _real_list, _real_list, _real_table)
    # A heading (about 24 bytes) comes before every third block on average: 8 bytes per block.
    size = len(head) + len(definitions) + sum(len(block) + 8 for block in carriers)
    blocks = [(block, True) for block in carriers]
    while True:  # filler up to the target, the last block kept when it ends nearer the target than without it
        kind = rng.choice(filler)
        block = _real_paragraph(rng, long=True) if long and kind is _real_paragraph else kind(rng)
        if size + (len(block) + 8) // 2 > target:
            break
        blocks.append((block, False))
        size += len(block) + 8
    rng.shuffle(blocks)
    body = head
    lines = body.count("\n") - head.split("\n---\n", 1)[0].count("\n")
    since_heading = 99
    # Lines the carriers still to come need, with a heading each at most: filler gives way to them.
    reserved = sum(block.count("\n") + 2 for block, carrier in blocks if carrier)
    for block, carrier in blocks:
        heading = _real_heading(rng) if since_heading >= rng.randint(2, 4) else ""
        added = heading.count("\n") + block.count("\n")
        if carrier:
            reserved -= block.count("\n") + 2
        elif lines + added + reserved > REAL_MAX_BODY_LINES:  # this filler block would crowd out the limit
            continue
        body += heading + block
        lines += added
        since_heading = 0 if heading else since_heading + 1
    return (body + definitions).encode("ascii")


def measure_shape(root: Path) -> dict[str, float]:
    """The figures the issues measured on public skills, read from the skill folders below ``root``:
    size and files per skill, SKILL.md size and lines, link constructs and fenced code blocks per SKILL.md.

    Links are counted by a simple scanner outside fenced code and code spans: inline links and images,
    reference-style links (``[text][ref]``, not their definitions) and ``<https://...>`` autolinks.
    """
    sizes, files, md_sizes, md_lines, links, fences = [], [], [], [], [], []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        paths = [p for p in folder.rglob("*") if p.is_file()]
        sizes.append(sum(p.stat().st_size for p in paths) / KB)
        files.append(len(paths))
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        md_sizes.append(len(text.encode("utf-8")) / KB)
        md_lines.append(text.count("\n") + (0 if text.endswith("\n") else 1))
        found, blocks = _scan_links(text)
        links.append(found)
        fences.append(blocks)
    if len(sizes) < 2:
        raise ValueError(f"measuring a corpus's shape needs at least two skills; {root} has {len(sizes)}")
    return {"skills": len(sizes), "mean_skill_kb": statistics.fmean(sizes),
            "median_skill_kb": statistics.median(sizes), "p99_skill_kb": statistics.quantiles(sizes, n=100)[98],
            "mean_files": statistics.fmean(files), "median_skill_md_kb": statistics.median(md_sizes),
            "median_skill_md_lines": statistics.median(md_lines), "mean_links": statistics.fmean(links),
            "share_with_link": sum(1 for k in links if k) / len(links),
            "mean_fenced_blocks": statistics.fmean(fences)}


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_LINK_CONSTRUCT = re.compile(r"!?\[[^\]\n]*\](?:\([^)\s]*(?:\s+\"[^\"]*\")?\)|\[[^\]\n]+\])|<https?://[^>\s]+>")


def _scan_links(text: str) -> tuple[int, int]:
    """(link constructs, fenced code blocks) of one Markdown file: a fence closes on its own marker, at least
    as long, with nothing after it."""
    links = blocks = 0
    fence = ""
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not line[opening.end():].strip():
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            blocks += 1
            continue
        links += len(_LINK_CONSTRUCT.findall(_CODE_SPAN.sub("", line)))
    return links, blocks


def shape_summary(shape: dict[str, float]) -> str:
    """One line of the figures ``measure_shape`` returns, in the issues' terms."""
    return (f"{shape['skills']:,.0f} skills: {shape['mean_skill_kb']:.1f} KB and {shape['mean_files']:.2f} files "
            f"per skill on average (median {shape['median_skill_kb']:.1f} KB, 99th percentile "
            f"{shape['p99_skill_kb']:.1f} KB), SKILL.md median {shape['median_skill_md_kb']:.1f} KB and "
            f"{shape['median_skill_md_lines']:.0f} lines, {shape['mean_links']:.2f} link constructs and "
            f"{shape['mean_fenced_blocks']:.2f} fenced code blocks per SKILL.md on average, "
            f"{shape['share_with_link']:.0%} with at least one link")


# --- cache ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CorpusKey:
    n: int
    seed: int
    shape: str = "synthetic"

    def folder_name(self) -> str:
        # The generator's source and the registry.yaml it copies are part of the key, so editing either never
        # reuses a stale corpus.
        material = Path(__file__).read_bytes() + (REPO / "registry.yaml").read_bytes()
        return f"corpus-{self.shape}-n{self.n}-s{self.seed}-{hashlib.sha256(material).hexdigest()[:10]}"


def cached_corpus(cache_dir: Path, n: int, seed: int = 0, shape: str = "synthetic") -> Path:
    """The ``skills/`` folder of a generated corpus under ``cache_dir``, generating it first when missing.

    Its parent holds the ``registry.yaml`` that builds it. Generation goes to a temporary sibling that is
    renamed into place, so a crashed or concurrent run never leaves a half-written corpus behind.
    """
    final = cache_dir / CorpusKey(n, seed, shape).folder_name()
    if (final / "skills").is_dir():
        return final / "skills"
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache_dir))
    try:
        generate(staging / "skills", n, seed, shape)
        shutil.copyfile(REPO / "registry.yaml", staging / "registry.yaml")
        try:
            os.rename(staging, final)
        except OSError:
            if not (final / "skills").is_dir():  # not another run that finished first
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return final / "skills"


# --- search rows ------------------------------------------------------------------------------------------------

def search_rows(n: int, seed: int = 0) -> list[list[object]]:
    """``n`` rows shaped like builder.core.search.search_entry's (name, description, category, tags, headings),
    drawn from the same vocabulary as the skills: for search benchmarks larger than any corpus on disk."""
    categories = category_slugs()
    rows: list[list[object]] = []
    for i in range(n):
        rng = random.Random(f"search-rows:{seed}:{i}")
        name = skill_name(i, n, rng)
        heads = [" ".join(w.capitalize() for w in name.split("-")[2:] + [rng.choice(WORDS)]), "When to use"]
        if rng.random() < 0.8:
            heads.append("Files")
        heads += [f"{rng.choice(VERBS).capitalize()} the {rng.choice(WORDS)}" for _ in range(rng.randint(1, 6))]
        rows.append([name, description(rng), rng.choice(categories), sorted(set(rng.sample(WORDS, rng.randint(1, 5)))),
                     " · ".join(dict.fromkeys(heads))])
    return rows
