"""The benchmark on real skills: ``python -m bench --corpus DIR`` and the corpus assembly of bench/real_corpus.py,
on a tiny corpus laid out as public repositories lay theirs out (the figures themselves are not asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO, write_tree

if str(REPO) not in sys.path:  # bench/ is a folder of the repository, not part of the installed package
    sys.path.insert(0, str(REPO))

from bench.real_corpus import assemble, declared_name, valid_name, with_name  # noqa: E402


def skill(name: str, body: str = "Use it.\n") -> str:
    return f"---\nname: {name}\ndescription: Does {name} things when asked to.\n---\n# {name}\n\n{body}"


def public_repos(root: Path) -> Path:
    """Two repositories as they are published: skills under skills/, under a hidden .claude/skills/, a skill
    named unlike its folder, the same name twice, a skill nested in another's folder, non-ASCII text before a
    link, a reference file and a folder that is not a skill."""
    write_tree(root / "one", {
        "README.md": "# Not a skill\n",
        "skills/pdf/SKILL.md": skill("pdf", "Read [the forms guide](forms.md) first.\n"),
        "skills/pdf/forms.md": "# Forms\n",
        "skills/Review Helper/SKILL.md": skill("Review_Helper"),
        "skills/outer/SKILL.md": skill("outer"),
        "skills/outer/inner/SKILL.md": skill("inner", "Grüße — see [notes](notes.md).\n"),
        "skills/outer/inner/notes.md": "notes\n",
    })
    write_tree(root / "two", {".claude/skills/pdf/SKILL.md": skill("pdf", "Another pdf skill.\n"),
                              "tools/x.py": "print(1)\n"})
    return root


def test_assembly_names_folders_for_their_skills_and_renames_duplicates(tmp_path: Path) -> None:
    made = assemble([public_repos(tmp_path / "src")], tmp_path / "corpus")
    names = sorted(p.name for p in (tmp_path / "corpus").iterdir())
    assert names == ["inner", "outer", "pdf", "pdf-2", "review-helper"]
    assert (made.count, made.renamed) == (5, 1)
    assert declared_name((tmp_path / "corpus/pdf-2/SKILL.md").read_text()) == "pdf-2"
    assert "Another pdf skill." in (tmp_path / "corpus/pdf-2/SKILL.md").read_text()
    assert declared_name((tmp_path / "corpus/review-helper/SKILL.md").read_text()) == "review-helper"
    assert (tmp_path / "corpus/pdf/forms.md").is_file()
    assert not (tmp_path / "corpus/outer/inner").exists(), "a nested skill is a skill of its own, not a file"
    assert (tmp_path / "corpus/inner/notes.md").is_file()


def test_names_are_made_valid_and_set_in_the_frontmatter_only() -> None:
    assert valid_name("My  Skill__v2!") == "my-skill-v2"
    assert valid_name("???") == "skill"
    assert with_name("---\nname: 'Old'\ndescription: d\n---\nname: body\n", "new") == \
        "---\nname: new\ndescription: d\n---\nname: body\n"
    assert with_name("---\ndescription: d\n---\n", "new") == "---\nname: new\ndescription: d\n---\n"
    assert with_name("no frontmatter\n", "new") == "no frontmatter\n"


def test_bench_measures_validate_on_a_real_corpus(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    env = {**os.environ, "SKILLREG_BENCH_CACHE": str(tmp_path / "cache")}
    source = public_repos(tmp_path / "src")
    done = subprocess.run([sys.executable, "-m", "bench", "--repeat", "1", "--only", "validate", "--corpus",
                           str(source), "--json", str(out)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "corpus: 5 real skills from" in done.stderr
    assert "1 duplicate names renamed <name>-<n>" in done.stderr
    assert "a corpus of real public skills;" in done.stdout.splitlines()[0]
    doc = json.loads(out.read_text())
    assert doc["shape"] == "public"
    assert {r["n"] for r in doc["results"]} == {5}
    speed = [r for r in doc["results"] if r["subject"].startswith("speed-up, skills-ref in-process / `skillreg")]
    assert speed and speed[0]["median"] > 0
    assert "skills-ref rejects 0" in done.stdout


def test_a_corpus_folder_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bench", "--corpus", str(tmp_path / "nope"), "--json",
                           str(tmp_path / "x.json")], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"--corpus {tmp_path / 'nope'}: not a folder" in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_fidelity_compares_structure_and_text_and_classes_what_differs() -> None:
    from bench.fidelity import _text_collapsed, difference_class, shape
    from builder.site.render import BodyRenderer

    renderer = BodyRenderer()
    ours = _text_collapsed(shape(renderer.render("# Title\n\n- [ ] see https://example.com now\n", (), "raw/")))
    github = _text_collapsed(shape(renderer.sanitise(
        '<h1 id="t">Title</h1>\n<ul><li><input type="checkbox" disabled=""> see '
        '<a href="https://example.com">https://example.com</a> now</li></ul>')))
    assert ours == github == ["<h", "'Title", ">h", "<ul", "<li", "<input", "'see", "<a", "'https://example.com",
                              ">a", "'now", ">li", ">ul"]
    unlinked = _text_collapsed(shape(renderer.sanitise("<h1>Title</h1><ul><li><input type=checkbox> see "
                                                       "https://example.com now</li></ul>")))
    assert difference_class(ours, unlinked) == "link"
    plain = _text_collapsed(shape(renderer.sanitise("<h1>Title</h1><ul><li>[ ] see x</li></ul>")))
    assert difference_class(ours, plain) == "task list"
    struck = _text_collapsed(shape(renderer.sanitise("<p>a <del>b</del></p>")))
    assert difference_class(_text_collapsed(shape("<p>a ~b~</p>")), struck) == "strikethrough"
    assert "<script" not in renderer.sanitise("<p>a</p><script>alert(1)</script>")


def test_scale_builds_the_first_skills_of_a_real_corpus_and_counts_the_published(tmp_path: Path) -> None:
    env = {**os.environ, "SKILLREG_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "bench", "--scale", "4", "--corpus", str(public_repos(tmp_path / "src"))],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Scale benchmark: 4 skills")
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1:] for line in done.stdout.splitlines()
            if line.startswith("| ")}
    assert rows["published skills"][0].strip(" |") == "4"
    assert float(rows["build CPU ms per published skill"][0].strip(" |")) > 0
