#!/usr/bin/env python3
"""Score the readability of English prose: Flesch reading ease, Flesch-Kincaid grade,
long sentences, likely passive voice and filler words. Markdown is cleaned first
(code blocks, inline code, URLs, HTML and link targets are removed; headings, table rows
and list items count as separate sentences).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ABBREVIATIONS = ["e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "prof.", "approx.", "no.", "fig.",
                 "cf.", "inc.", "ltd.", "jr.", "sr.", "st."]
BE_FORMS = {"am", "is", "are", "was", "were", "be", "been", "being", "is't", "isn't", "aren't", "wasn't",
            "weren't", "get", "gets", "got", "gotten", "getting"}
IRREGULAR_PARTICIPLES = {
    "arisen", "awoken", "been", "beaten", "become", "begun", "bent", "bet", "bitten", "blown", "broken", "brought",
    "built", "burnt", "bought", "caught", "chosen", "come", "cost", "cut", "dealt", "done", "drawn", "driven",
    "eaten", "fallen", "fed", "felt", "fought", "found", "flown", "forbidden", "forgotten", "forgiven", "frozen",
    "given", "gone", "grown", "hung", "heard", "hidden", "hit", "held", "hurt", "kept", "known", "laid", "led",
    "left", "lent", "let", "lost", "made", "meant", "met", "paid", "put", "read", "ridden", "risen", "run", "said",
    "seen", "sought", "sold", "sent", "set", "shaken", "shown", "shut", "sung", "sunk", "spoken", "spent", "split",
    "spread", "stolen", "struck", "sworn", "swept", "taken", "taught", "torn", "told", "thought", "thrown",
    "understood", "undone", "upset", "woken", "worn", "won", "withdrawn", "written", "overridden", "rewritten",
}
NOT_PARTICIPLE = {"need", "feed", "seed", "bed", "red", "shed", "speed", "indeed", "hundred", "sacred", "naked",
                  "wicked", "beloved", "aged", "ragged", "rugged", "learned", "used", "supposed", "based", "tired",
                  "interested", "excited", "concerned", "bored", "scared", "worried", "married", "related",
                  "required", "advanced", "detailed", "limited", "complicated", "dedicated", "experienced"}
FILLERS = ["very", "really", "just", "basically", "actually", "simply", "quite", "rather", "obviously",
           "clearly", "literally", "in order to", "a lot of", "at this point in time", "due to the fact that",
           "it should be noted that", "in terms of", "kind of", "sort of"]
WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,]\d+)*")



def syllables(word: str) -> int:
    w = word.lower().strip("'-")
    if not w:
        return 0
    if w.isdigit():
        return max(1, len(w))  # numbers are read as several syllables; rough but stable
    if len(w) <= 3:
        return 1
    w = re.sub(r"'s$", "", w)
    count = len(re.findall(r"[aeiouy]+", w))
    consonant_le = w.endswith("le") and w[-3] not in "aeiouy"  # ta-ble, sim-ple: -le is a syllable
    if w.endswith("e") and not consonant_le and not w.endswith(("ee", "ye")) and count > 1:
        count -= 1  # silent final e: make, code, file
    if w.endswith("ed") and not w.endswith(("ted", "ded")) and count > 1 and w[-3] not in "aeiouy":
        count -= 1  # walked, jumped
    if w.endswith("es") and not w.endswith(("ses", "zes", "ches", "shes", "ges", "ces", "xes")) and count > 1:
        count -= 1  # makes, codes
    return max(1, count)


def clean_inline(text: str) -> str:
    text = re.sub(r"`[^`]*`", " code ", text)
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"^(#{1,6}|[-*+]|\d+[.)]|>)\s*", "", text)
    text = text.replace("|", ". ").replace("**", "").replace("__", "")
    text = re.sub(r"(?<!\w)[*_](\S)", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def clean_markdown(text: str) -> list[tuple[list[tuple[int, int]], str]]:
    """Split Markdown into prose blocks with code and markup removed.

    Each block is (line map, text); the line map lists (offset in text, source line number).
    """
    raw_blocks: list[list[tuple[int, str]]] = []
    in_fence = False
    in_front_matter = False
    current: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if number == 1 and line == "---":
            in_front_matter = True
            continue
        if in_front_matter:
            if line in ("---", "..."):
                in_front_matter = False
            continue
        if re.match(r"^\s*(```|~~~)", line):
            in_fence = not in_fence
            continue
        if in_fence or (re.match(r"^( {4}|\t)", line) and not current):
            continue
        stripped = line.strip()
        standalone = re.match(r"^(#{1,6}\s|[-*+]\s|\d+[.)]\s|>\s?|\|)", stripped)
        if not stripped or standalone:
            if current:
                raw_blocks.append(current)
                current = []
            if not stripped or re.fullmatch(r"\|[|:\-\s]*", stripped):
                continue  # blank line or table separator row
        current.append((number, stripped))
        if standalone and stripped.startswith(("#", "|")):
            raw_blocks.append(current)  # headings and table rows are complete on one line
            current = []
    if current:
        raw_blocks.append(current)
    blocks = []
    for lines in raw_blocks:
        line_map, parts, offset = [], [], 0
        for number, line in lines:
            cleaned = clean_inline(line)
            if not cleaned:
                continue
            line_map.append((offset, number))
            parts.append(cleaned)
            offset += len(cleaned) + 1
        block = " ".join(parts)
        if WORD_RE.search(block):
            blocks.append((line_map, block))
    return blocks


def split_sentences(block: str) -> list[tuple[int, str]]:
    """Return (offset, sentence) pairs. Protected dots keep the text length unchanged."""
    protected = block
    for abbr in ABBREVIATIONS:
        protected = re.sub(re.escape(abbr), lambda m: m.group(0).replace(".", "\0"), protected, flags=re.I)
    protected = re.sub(r"(\d)\.(\d)", "\\1\0\\2", protected)
    pieces, last = [], 0
    for match in re.finditer(r"(?<=[.!?:;])\s+(?=[\"'(\[]?[A-Z0-9])", protected):
        pieces.append((last, protected[last:match.start()]))
        last = match.end()
    pieces.append((last, protected[last:]))
    return [(offset + len(piece) - len(piece.lstrip()), piece.replace("\0", ".").strip())
            for offset, piece in pieces if WORD_RE.search(piece)]


def line_of(line_map: list[tuple[int, int]], offset: int) -> int:
    number = line_map[0][1]
    for start, line in line_map:
        if start <= offset:
            number = line
    return number


def passive_hits(sentence: str) -> list[str]:
    tokens = re.findall(r"[A-Za-z']+", sentence)
    hits = []
    for i, token in enumerate(tokens):
        if token.lower() not in BE_FORMS:
            continue
        j = i + 1
        while j < len(tokens) and (tokens[j].lower().endswith("ly") or tokens[j].lower() in ("not", "also",
                                                                                              "being", "been")):
            j += 1
        if j >= len(tokens):
            continue
        candidate = tokens[j].lower()
        if candidate in NOT_PARTICIPLE:
            continue
        if candidate in IRREGULAR_PARTICIPLES or (candidate.endswith("ed") and len(candidate) > 4):
            hits.append(" ".join(tokens[i:j + 1]))
    return hits


def analyse(text: str, max_words: int) -> dict:
    sentences: list[tuple[int, str]] = []
    for line_map, block in clean_markdown(text):
        sentences.extend((line_of(line_map, offset), s) for offset, s in split_sentences(block))
    words = [w for _, s in sentences for w in WORD_RE.findall(s)]
    n_sent, n_words = len(sentences), len(words)
    if n_words == 0:
        raise ValueError("no prose found to score (only code, markup or empty input)")
    n_syll = sum(syllables(w) for w in words)
    complex_words = sum(1 for w in words if syllables(w) >= 3)
    wps, spw = n_words / n_sent, n_syll / n_words
    ease = 206.835 - 1.015 * wps - 84.6 * spw
    grade = 0.39 * wps + 11.8 * spw - 15.59
    long_sentences = []
    passive = []
    for number, s in sentences:
        count = len(WORD_RE.findall(s))
        if count > max_words:
            long_sentences.append({"line": number, "words": count, "text": s if len(s) <= 90 else s[:87] + "..."})
        for hit in passive_hits(s):
            passive.append({"line": number, "phrase": hit})
    lowered = " " + " ".join(w.lower() for w in words) + " "
    fillers = {f: lowered.count(f" {f} ") for f in FILLERS}
    fillers = {f: n for f, n in fillers.items() if n}
    return {
        "sentences": n_sent, "words": n_words, "syllables": n_syll,
        "words_per_sentence": round(wps, 1), "syllables_per_word": round(spw, 2),
        "complex_word_pct": round(100 * complex_words / n_words, 1),
        "flesch_reading_ease": round(ease, 1), "flesch_kincaid_grade": round(grade, 1),
        "band": band(ease), "long_sentences": long_sentences, "passive": passive,
        "fillers": dict(sorted(fillers.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def band(ease: float) -> str:
    for limit, label in [(90, "very easy"), (80, "easy"), (70, "fairly easy"), (60, "plain English"),
                         (50, "fairly difficult"), (30, "difficult")]:
        if ease >= limit:
            return label
    return "very difficult"


def render(r: dict, name: str, max_words: int) -> str:
    out = [f"file: {name}",
           f"sentences: {r['sentences']}  words: {r['words']}  words/sentence: {r['words_per_sentence']}  "
           f"syllables/word: {r['syllables_per_word']}",
           f"flesch reading ease: {r['flesch_reading_ease']} ({r['band']})",
           f"flesch-kincaid grade: {r['flesch_kincaid_grade']}",
           f"complex words (3+ syllables): {r['complex_word_pct']}%"]
    out.append(f"long sentences (> {max_words} words): {len(r['long_sentences'])}")
    out += [f"  line {s['line']}: {s['words']} words: {s['text']}" for s in r["long_sentences"]]
    out.append(f"possible passive voice: {len(r['passive'])}")
    out += [f"  line {p['line']}: {p['phrase']}" for p in r["passive"]]
    fill = ", ".join(f"{f} x{n}" for f, n in r["fillers"].items())
    out.append(f"filler words: {fill if fill else 'none'}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Score English prose readability (Flesch reading ease, grade level, long sentences, "
                    "passive voice, fillers). Accepts plain text or Markdown.")
    parser.add_argument("file", help="text or Markdown file ('-' for stdin)")
    parser.add_argument("--max-words", type=int, default=25, help="flag sentences longer than this (default 25)")
    parser.add_argument("--min-score", type=float,
                        help="exit 1 when Flesch reading ease is below this value (for CI)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except FileNotFoundError:
        print(f"error: file not found: {args.file}", file=sys.stderr)
        return 2
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    try:
        report = analyse(text, args.max_words)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"file": args.file, **report}, indent=2, sort_keys=True))
    else:
        print(render(report, args.file, args.max_words))
    if args.min_score is not None and report["flesch_reading_ease"] < args.min_score:
        print(f"reading ease {report['flesch_reading_ease']} is below --min-score {args.min_score}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
