"""Tests for skills/readability-check/scripts/readability.py."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "readability-check" / "scripts" / "readability.py"

PROSE = """# Release Notes

The cache is cleared automatically when the configuration file was changed by the operator.
We fixed the login bug. It was found by a customer.

- Faster startup.
- Basically, the new parser is really just much faster in order to handle very large files, because the old \
implementation that we had been using for several years was reading every single line twice.

```python
x = "this code is ignored, even though it is written in a very long line with many many words in it"
```

See the [guide](docs/guide.md) for details, e.g. setup.
"""


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, stdin=stdin)


def load_module():
    # Never leave a __pycache__ folder inside the skill: skills must not ship bytecode.
    previous = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec = importlib.util.spec_from_file_location("readability_script", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = previous
    return module


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "Flesch" in result.stdout


def test_report_on_markdown(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text(PROSE, encoding="utf-8")
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"file: {path}",
        "sentences: 7  words: 71  words/sentence: 10.1  syllables/word: 1.58",
        "flesch reading ease: 63.1 (plain English)",
        "flesch-kincaid grade: 7.0",
        "complex words (3+ syllables): 11.3%",
        "long sentences (> 25 words): 1",
        "  line 7: 34 words: Basically, the new parser is really just much faster in order to handle very large file...",
        "possible passive voice: 3",
        "  line 3: is cleared",
        "  line 3: was changed",
        "  line 4: was found",
        "filler words: basically x1, in order to x1, just x1, really x1, very x1",
    ]


def test_json_stdin_and_min_score():
    simple = "The cat sat on the mat. The dog ran to the park. We ate lunch.\n"
    result = run("-", "--json", stdin=simple)
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert (report["sentences"], report["words"], report["syllables"]) == (3, 15, 15)
    assert report["band"] == "very easy"
    assert report["passive"] == [] and report["long_sentences"] == []
    hard = ("Notwithstanding considerable organisational reluctance, the implementation of comprehensive "
            "infrastructural modernisation necessitated unprecedented interdepartmental coordination.\n")
    result = run("-", "--min-score", "30", stdin=hard)
    assert result.returncode == 1
    assert "is below --min-score 30" in result.stderr


def test_syllable_and_sentence_helpers():
    module = load_module()
    counts = {w: module.syllables(w) for w in ["the", "file", "table", "makes", "jumped", "wanted", "needed",
                                               "automatically", "code"]}
    assert counts == {"the": 1, "file": 1, "table": 2, "makes": 1, "jumped": 1, "wanted": 2, "needed": 2,
                      "automatically": 6, "code": 1}
    assert [s for _, s in module.split_sentences("Dr. Smith paid 3.5 dollars, e.g. cash. Then he left.")] == [
        "Dr. Smith paid 3.5 dollars, e.g. cash.", "Then he left."]


def test_code_only_and_missing_file_exit_two(tmp_path):
    result = run("-", stdin="```\nprint('hi')\n```\n")
    assert result.returncode == 2
    assert "no prose found" in result.stderr
    result = run(str(tmp_path / "missing.md"))
    assert result.returncode == 2
    assert "error: file not found" in result.stderr
