"""The README is for a newcomer, read in ten minutes: under 300 lines, the sections a first
day needs (what it does, the two commands, pointing it at one's own tables, configuration,
policies, the command line, the guarantee in one paragraph, the headline numbers with the
link to every measurement), and every relative link lands on a file, and on a heading
where it names one. Everything else lives in docs/, said once."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SECTIONS = ("Two commands", "Point it at your tables", "Configuration", "Policies", "Command line", "The guarantee", "Headline numbers")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _sections(text: str) -> dict[str, str]:
    """Each `## ` section's body, by its heading."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2])}


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(markdown: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", markdown.read_text(), flags=re.MULTILINE | re.DOTALL)  # a `# comment` in a code block is no heading
    return {_anchor(heading) for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def test_the_readme_is_short_and_has_a_newcomers_sections() -> None:
    text = README.read_text()
    assert len(text.splitlines()) < 300
    sections = _sections(text)
    missing = [name for name in SECTIONS if name not in sections]
    assert not missing, f"README lacks {missing}; has {list(sections)}"
    what_it_does = text.split("\n## ", 1)[0]
    assert "Iceberg" in what_it_does and len(what_it_does.splitlines()) > 5
    assert "make demo" in sections["Two commands"] and "make test" in sections["Two commands"]
    guarantee = [p for p in sections["The guarantee"].strip().split("\n\n") if p.strip()]
    assert len(guarantee) == 1, f"the guarantee is {len(guarantee)} paragraphs"
    numbers = sections["Headline numbers"]
    assert "](docs/benchmarks.md)" in numbers and re.search(r"^\| what \|", numbers, flags=re.MULTILINE)


def test_every_relative_link_of_the_readme_resolves() -> None:
    broken = []
    for target in LINK.findall(README.read_text()):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check offline
            continue
        path, _, anchor = target.partition("#")
        linked = (ROOT / path) if path else README
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {path or 'README.md'}")
    assert not broken, broken


def test_anchors_are_made_as_github_makes_them() -> None:
    assert _anchor("Publishing: staged, verified, then current") == "publishing-staged-verified-then-current"
    assert _anchor("S3 answers 403") == "s3-answers-403"
    assert _anchor("Verification: what each job reads") == "verification-what-each-job-reads"
