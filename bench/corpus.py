"""Synthetic skill folders of realistic size, the same bytes for the same seed, to benchmark against.

Skill ``i`` depends only on ``(seed, i)``, so the first 100 skills of a 1,000-skill corpus equal a 100-skill
corpus. Every generated skill is valid under the ``spec`` profile and under skills-ref. A cached corpus is a
registry of its own: ``registry.yaml`` (a copy of this repository's) beside the ``skills/`` folder, so
``skillreg --config <corpus>/registry.yaml build`` builds it.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent

SKILL_MD_BYTES = (2 * 1024, 8 * 1024)
EXTRA_FILE_BYTES = (1024, 50 * 1024)
ASSET_BYTES = (512, 8 * 1024)
DESCRIPTION_CHARS = (80, 400)
MAX_EXTRA_FILES = 4
ASSET_EVERY = 10  # about one skill in ten carries a binary asset
# Weights for 0, 1, 2, 3 and 4 extra files: most skills have one or two.
EXTRA_FILE_WEIGHTS = (20, 30, 25, 15, 10)
SLACK = 1024  # bytes a generated text file may run past its drawn size to end on a whole line

WORDS = """
access account action adapter agent alert analysis annotation api archive argument artifact asset audit
author backup badge baseline batch benchmark binary branch bucket buffer build bundle cache call canary
category change channel check checklist chunk client cluster column command comment commit compiler config
container context contract coverage credential cron cursor dashboard data dataset date debug decision
default dependency deploy diff digest directory document domain draft driver encoding endpoint entry
environment error event example export expression extension feature feed field file filter fixture flag
folder format function gateway glossary grammar graph guide handler hash header heading history hook host
image import incident index input install interface issue item job journal key label language layer
layout lesson library license limit line link lint list locale lock log loop manifest map marker matrix
merge message method metric migration mirror model module monitor mutation namespace network node note
notebook object option order outline output owner package page parser patch path pattern payload
permission pipeline plan platform plugin policy port preview profile project prompt property protocol
provider query queue quota range rate record recipe reference region registry release report repository
request resource response result review revision role rollback route rule runtime sample schema scope
screen script search secret section segment selector sequence server service session setting shard
signal snapshot source spec stage state status step storage stream string style summary survey switch
symbol table tag task team template tenant term test thread ticket timeline token tool topic trace
transaction trigger type unit update upload usage user value variable vendor version view volume warning
webhook widget window workflow workspace
""".split()

VERBS = """
analyse audit build check clean collect compare convert create debug deploy document draft explain export
extract find format generate group import index inspect label lint list map measure merge migrate monitor
normalise organise parse plan prepare profile publish refactor rename report resolve review rewrite scan
schedule search sort split summarise sync test track trace translate triage update validate verify
""".split()

ADJECTIVES = """
stale broken noisy large nested flaky slow duplicate missing unused legacy private public shared local
remote failing pending draft partial empty unknown outdated deprecated risky sensitive minimal verbose
""".split()

SITUATIONS = (
    "the user asks to {verb} {adj} {nouns}",
    "a pull request touches {noun} or {noun2} files",
    "someone reports {adj} {nouns} in the {noun2}",
    "the {noun} needs a new {noun2} before release",
    "the {noun} {noun2} is {adj} or hard to read",
    "working with {adj} {noun} data",
    "preparing a {noun} for review",
)

FIRST_NAMES = "Ada Alan Barbara Chen Dana Edsger Fatima Grace Hamid Ines Jun Katherine Linus Margaret Nia Omar".split()
LAST_NAMES = "Hopper Lovelace Turing Liskov Ritchie Thompson Okafor Tanaka Novak Silva Haddad Berg Kowalski".split()

SHELL_COMMANDS = ("git", "grep", "sed", "awk", "find", "sort", "uniq", "wc", "curl", "jq", "python3", "tar")


def category_slugs(config: Path = REPO / "registry.yaml") -> tuple[str, ...]:
    """The category slugs of registry.yaml, so generated skills pass the registry's category rule."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    return tuple(c["slug"] for c in data["categories"])


def skill_name(i: int, n: int, rng: random.Random) -> str:
    width = max(5, len(str(max(n - 1, 0))))
    return f"skill-{i:0{width}d}-{rng.choice(WORDS)}"


def generate(root: Path, n: int, seed: int = 0) -> list[Path]:
    """Write ``n`` skill folders below ``root`` (created if needed) and return them in name order."""
    root.mkdir(parents=True, exist_ok=True)
    categories = category_slugs()
    folders = []
    for i in range(n):
        folders.append(_write_skill(root, i, n, seed, categories))
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


# --- cache ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CorpusKey:
    n: int
    seed: int

    def folder_name(self) -> str:
        # The generator's source and the registry.yaml it copies are part of the key, so editing either never
        # reuses a stale corpus.
        material = Path(__file__).read_bytes() + (REPO / "registry.yaml").read_bytes()
        return f"corpus-n{self.n}-s{self.seed}-{hashlib.sha256(material).hexdigest()[:10]}"


def cached_corpus(cache_dir: Path, n: int, seed: int = 0) -> Path:
    """The ``skills/`` folder of a generated corpus under ``cache_dir``, generating it first when missing.

    Its parent holds the ``registry.yaml`` that builds it. Generation goes to a temporary sibling that is
    renamed into place, so a crashed or concurrent run never leaves a half-written corpus behind.
    """
    final = cache_dir / CorpusKey(n, seed).folder_name()
    if (final / "skills").is_dir():
        return final / "skills"
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache_dir))
    try:
        generate(staging / "skills", n, seed)
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
    """``n`` rows shaped like builder.search.search_entry's (name, description, category, tags, headings),
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
