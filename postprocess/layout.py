"""Layout-aware helpers of the cleaner: table rows, metadata lines, a DOM check of the
extraction and a fallback extractor.

trafilatura writes a layout table as rows ``| cell | cell |`` (a literal ``|`` inside a cell as
``\\|``): on a table-layout site the navigation bar, the title, the date/source/author row and
the whole article each become one such row. :func:`table_cells` splits a row into its cells so
that each cell is judged on its own (a menu cell, a metadata cell, the article cell).

The extraction check compares trafilatura's text with the page's **main block**: the element
whose ``<p>`` children hold the most text (the densest paragraph container, the block a reader
sees as the article; cf. the text-density idea of Kohlschütter et al. 2010, "Boilerplate
detection using shallow text features"). When the two disagree, readability-lxml (the
arc90/Mozilla Readability algorithm) extracts the page as well, and the text that agrees best
with the main block is kept (:func:`choose_text`). Pages where trafilatura and the block agree
(most pages) cost one pass over the tree.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise
from typing import Any

__all__ = [
    "BLOCK_TAGS",
    "block_text",
    "choose_text",
    "main_block_text",
    "paragraph_breaks",
    "readability_text",
    "table_cells",
    "tokens",
]

#: Elements that start a new line in :func:`block_text`.
BLOCK_TAGS = frozenset(
    "p div h1 h2 h3 h4 h5 h6 li tr td th br section article blockquote table ul ol dd dt "
    "center pre figure figcaption header footer".split()
)
_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[A-Za-z]+|\d+")
_CELL = re.compile(r"(?<!\\)\|")


def tokens(text: str) -> Counter[str]:
    """Bag of tokens (CJK characters, Latin words, digit runs) for agreement measures."""
    return Counter(t.lower() for t in _TOKEN.findall(text or ""))


def table_cells(line: str) -> list[str] | None:
    """The cells of a trafilatura table row (``| a | b |``), stripped, empty cells left out;
    None when ``line`` is not a table row."""
    s = line.strip()
    if not s.startswith("|"):
        return None
    return [c.strip() for c in _CELL.split(s) if c.strip()]


def block_text(el: Any) -> str:
    """The text of an element with one line per block element (``<p>``, ``<div>``, ``<br>``…);
    ``<script>``/``<style>`` are skipped."""
    out: list[str] = [""]

    def walk(e: Any) -> None:
        tag = e.tag if isinstance(e.tag, str) else ""
        if tag in ("script", "style", "noscript", "template"):
            return
        block = tag in BLOCK_TAGS
        if block:
            out.append("")
        if e.text:
            out[-1] += e.text
        for child in e:
            walk(child)
            if child.tail:
                out[-1] += child.tail
        if block:
            out.append("")

    walk(el)
    lines = (re.sub(r"\s+", " ", ln).strip() for ln in out)
    return "\n".join(ln for ln in lines if ln)


def main_block_text(tree: Any, min_chars: int = 200) -> str:
    """The text of the page's densest paragraph container: the element whose ``<p>`` children
    (direct, or one level down) hold the most non-space characters; '' when no container holds
    ``min_chars`` (pages without paragraphs, e.g. table layouts, are not checked)."""
    if tree is None:
        return ""
    score: Counter[Any] = Counter()
    for p in tree.iter("p"):
        n = len(re.sub(r"\s+", "", p.text_content() or ""))
        if not n:
            continue
        parent = p.getparent()
        if parent is None:
            continue
        score[parent] += n
        grand = parent.getparent()
        if grand is not None and parent.tag in ("div", "section", "span", "font", "td"):
            score[grand] += n
    if not score:
        return ""
    best, n = max(score.items(), key=lambda kv: kv[1])
    if n < min_chars:
        return ""
    while True:  # a child that holds nearly all of it is the tighter block
        child = max((c for c in best if score.get(c, 0) >= 0.8 * n), key=score.get, default=None)
        if child is None:
            break
        best, n = child, score[child]
    paras = [
        re.sub(r"\s+", " ", p.text_content() or "").strip()
        for p in best.iter("p")
        if not any(a.tag == "p" for a in p.iterancestors() if a is not best)
    ]
    return "\n".join(x for x in paras if x)


def paragraph_breaks(line: str, paras: list[str], *, min_chars: int = 4) -> list[str]:
    """``line`` cut where the main block's paragraphs ``paras`` start, in order.

    trafilatura writes a layout-table cell as one line, the ``<p>`` paragraphs of the cell
    joined by spaces; the page's main block still has them apart. Paragraphs are found in
    ``line`` with spaces ignored, each after the previous one (shorter than ``min_chars``
    letters or not found: skipped); the text of ``line`` is kept as it is.
    """
    idx = [i for i, ch in enumerate(line) if not ch.isspace()]
    flat = "".join(line[i] for i in idx)
    cuts: list[int] = []
    pos = 0
    for para in paras:
        key = "".join(para.split())
        if len(key) < min_chars:
            continue
        j = flat.find(key, pos)
        if j < 0:
            continue
        if j > 0:
            cuts.append(idx[j])
        pos = j + len(key)
    if not cuts:
        return [line]
    bounds = [0, *cuts, len(line)]
    parts = (line[a:b].strip() for a, b in pairwise(bounds))
    return [x for x in parts if x]


def readability_text(html: str) -> str:
    """The main text of readability-lxml's article block, one line per block element."""
    from lxml import html as lxml_html
    from readability import Document

    try:
        summary = Document(html).summary(html_partial=True)
    except Exception:  # noqa: BLE001 - readability raises bare Exceptions on odd pages
        return ""
    if not summary or not summary.strip():
        return ""
    return block_text(lxml_html.fromstring(summary))


def _overlap(a: Counter[str], b: Counter[str]) -> tuple[float, float, float]:
    """(share of ``a`` in ``b``, share of ``b`` in ``a``, F1) of two token bags."""
    common = sum((a & b).values())
    if not common:
        return 0.0, 0.0, 0.0
    pa, pb = common / sum(a.values()), common / sum(b.values())
    return pa, pb, 2 * pa * pb / (pa + pb)


def choose_text(
    text: str,
    tree: Any,
    html: str | None,
    *,
    block: str | None = None,
    min_block_recall: float = 0.8,
    min_text_precision: float = 0.6,
    margin: float = 0.1,
) -> tuple[str, str]:
    """Check trafilatura's ``text`` against the page's main block and fall back to
    readability-lxml when they disagree; returns ``(text, "trafilatura" | "readability")``.

    Agreement: the text holds at least ``min_block_recall`` of the block's tokens and at least
    ``min_text_precision`` of the text's tokens are in the block. Otherwise readability's text
    replaces trafilatura's when its F1 with the block is larger by ``margin``. ``block``: the
    main block's text when already known (:func:`main_block_text`).
    """
    if block is None:
        block = main_block_text(tree)
    if not block or not html:
        return text, "trafilatura"
    b, t = tokens(block), tokens(text)
    in_block, block_in_text, f1_t = _overlap(t, b)
    if block_in_text >= min_block_recall and in_block >= min_text_precision:
        return text, "trafilatura"
    alt = readability_text(html)
    if not alt:
        return text, "trafilatura"
    _, _, f1_r = _overlap(tokens(alt), b)
    if f1_r >= f1_t + margin:
        return alt, "readability"
    return text, "trafilatura"
