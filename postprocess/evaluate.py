"""Scoring cleaned text against trafilatura's gold snippets (``evaldata_zh_subset.json``).

The evaluation file maps a URL to ``{"file": ..., "with": [...], "without": [...]}``: snippets
that the main text must contain and snippets (boilerplate) that it must not — the format of
trafilatura's own ``tests/evaldata.py``. A snippet counts as present when it occurs in the text
after whitespace is removed from both (extractors differ in line breaks).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SPACE = re.compile(r"\s+")


@dataclass
class GoldPage:
    url: str
    path: Path
    with_: list[str]
    without: list[str]


@dataclass
class SnippetScore:
    """Counts over a set of pages for one extractor."""

    with_total: int = 0
    with_kept: int = 0
    without_total: int = 0
    without_dropped: int = 0
    missed: list[tuple[str, str]] = field(default_factory=list)  # (file, with-snippet lost)
    leaked: list[tuple[str, str]] = field(default_factory=list)  # (file, without-snippet left)

    def add(self, name: str, text: str, page: GoldPage) -> None:
        flat = _SPACE.sub("", text or "")
        for s in page.with_:
            self.with_total += 1
            if _SPACE.sub("", s) in flat:
                self.with_kept += 1
            else:
                self.missed.append((name, s))
        for s in page.without:
            self.without_total += 1
            if _SPACE.sub("", s) in flat:
                self.leaked.append((name, s))
            else:
                self.without_dropped += 1


def load_gold(directory: Path, filename: str = "evaldata_zh_subset.json") -> list[GoldPage]:
    """The gold pages of ``directory`` (the HTML files next to the JSON)."""
    data: Mapping[str, Any] = json.loads((directory / filename).read_text(encoding="utf-8"))
    return [
        GoldPage(url, directory / e["file"], list(e.get("with", [])), list(e.get("without", [])))
        for url, e in data.items()
    ]


def score(pages: list[GoldPage], extract: Callable[[bytes, str], str | None]) -> SnippetScore:
    """Run ``extract(html_bytes, url) -> text`` on every page and count the snippets."""
    out = SnippetScore()
    for page in pages:
        out.add(page.path.name, extract(page.path.read_bytes(), page.url) or "", page)
    return out
