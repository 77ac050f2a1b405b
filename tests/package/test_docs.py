"""The project documents itself: the package, the README and the sample manifests cite
``docs/design.md`` (a file every user has), never a specification outside the repository, and every
section or choice id they cite exists there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
SOURCES = sorted([*(ROOT / "inspector").rglob("*.py"), *(ROOT / "sample_manifests").glob("*.yaml"),
                  ROOT / "README.md", ROOT / "app.py"])
SOURCES = [p for p in SOURCES if "_app" not in p.parts]  # inspector/_app/app.py is a link to app.py

SECTIONS = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?[a-z]?)\. ", DESIGN, re.MULTILINE)) | \
    set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?[a-z]?) ", DESIGN, re.MULTILINE))
CHOICES = set(re.findall(r"^\| (Q\d+) \|", DESIGN, re.MULTILINE))


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


# the tests and the other documents cite the design note too (this file names the pattern it bans)
CITING = [*SOURCES, *sorted((ROOT / "docs").glob("*.md")),
          *sorted(p for p in (ROOT / "tests").rglob("*.py") if p.name != "test_docs.py")]
ESTIMATES = set(re.findall(r"^\| (E\d) \|", DESIGN, re.MULTILINE)) | \
    set(re.findall(r"^- \*\*(E\d)\*\*", DESIGN, re.MULTILINE))


@pytest.mark.parametrize("path", CITING, ids=rel)
def test_no_citation_of_a_file_users_do_not_have(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"ENGINE(\.md)?\b", text), rel(path)
    assert not re.search(r"\bseed 00\d\b|\bscenarios? \d+\b", text), rel(path)


def test_every_estimate_id_the_code_uses_is_defined_in_the_design_note() -> None:
    used = {e for p in CITING for e in re.findall(r"\bE[1-9]\b", p.read_text(encoding="utf-8"))}
    assert used and used <= ESTIMATES, sorted(used - ESTIMATES)


def test_every_choice_is_recorded_with_its_id() -> None:
    assert CHOICES == {f"Q{i}" for i in range(1, 26)} - {"Q14"}  # Q14 was merged into Q10
    assert "Q14" in DESIGN.split("| Q10 |", 1)[1].split("\n", 1)[0]


def test_the_design_note_covers_budget_strategies_and_replay() -> None:
    for heading in ("### 3.2 The budget of one call", "### 3.3 `stack`", "### 3.4 `sliding-window`",
                    "### 3.5 `summarising`", "## 5. The replay model", "## 6. Deliberate choices"):
        assert heading in DESIGN


def cited(text: str) -> list[str]:
    """Every ``§x.y`` and ``Qn`` in a citation of docs/design.md (one citation may list several)."""
    out: list[str] = []
    for m in re.finditer(r"docs/design\.md((?:[ ,/]*(?:§\d+(?:\.\d+)?[a-z]?|Q\d+|step \d+))+)", text):
        out += re.findall(r"§\d+(?:\.\d+)?[a-z]?|Q\d+", m.group(1))
    return out


def test_every_citation_points_at_something_in_the_design_note() -> None:
    seen = 0
    for path in CITING:
        for ref in cited(path.read_text(encoding="utf-8")):
            seen += 1
            if ref.startswith("Q"):
                assert ref in CHOICES, (rel(path), ref)
            else:
                assert ref[1:] in SECTIONS, (rel(path), ref)
    assert seen >= 50  # the package really does cite it


# --- every relative link of the README, the changelog and docs/*.md resolves ----------------------------

LINKED = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation other than ``-`` and ``_`` dropped, spaces as ``-``."""
    out = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*$", strip_code(text, inline=False), re.MULTILINE):
        out.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return out


def strip_code(text: str, *, inline: bool = True) -> str:
    """The text without fenced blocks and (``inline``) inline code: a link shown as code is not a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text) if inline else text


def relative_links(text: str) -> list[str]:
    targets = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", strip_code(text))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_link_checker_sees_links_and_anchors() -> None:
    text = "# A title (`x.py`)\n[a](docs/a.md) [b](#a-title-xpy) ![c](c.png) [d](https://x.org) `[e](e.md)`\n"
    assert relative_links(text) == ["docs/a.md", "#a-title-xpy", "c.png"]
    assert anchors(text) == {"a-title-xpy"}
    assert len(relative_links((ROOT / "README.md").read_text(encoding="utf-8"))) >= 10  # the front door links out


@pytest.mark.parametrize("path", LINKED, ids=rel)
def test_every_relative_link_resolves(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for link in relative_links(text):
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        assert file.exists(), (rel(path), link)
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file.read_text(encoding="utf-8")), (rel(path), link)
