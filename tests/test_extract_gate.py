"""trafilatura's comparison with readability and jusText run only where it can change the
result (topicrawl.extract.gated_compare_extraction): the same results as trafilatura's own
``compare_extraction`` on real and generated pages, and a bound that holds."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
import trafilatura.core
import trafilatura.external
from lxml import html as lxml_html
from trafilatura.utils import trim

from postprocess.clean import extract_text
from topicrawl import extract
from topicrawl.extract import decode_html, extract_page, readability_length_bound

DATA = Path(os.environ.get("TOPICRAWL_DATA", "/work/shared/data")) / "html"
ARTICLE = "".join(f"<p>第{i}段：国务院常务会议研究部署经济工作，会议强调抓好落实，推动高质量发展。</p>"
                  for i in range(8))  # fmt: skip


def real_pages() -> list[tuple[str, str]]:
    """(html, url) of the shared data's real Chinese and English pages."""
    found = []
    for path in sorted((DATA / "news_zh").rglob("*.html"))[:40]:
        found.append((decode_html(path.read_bytes())[0], f"http://{path.parent.name}.example/"))
    for path in sorted((DATA / "article_extraction_benchmark" / "html").glob("*.html.gz"))[:30]:
        found.append((decode_html(gzip.decompress(path.read_bytes()))[0], "http://aeb.example/"))
    return found


def generated_pages(small_web: Path) -> list[tuple[str, str]]:
    """(html, url) of about 80 pages of the small generated web, every kind of page."""
    root = small_web / "sites"
    paths = sorted(root.rglob("*.html"))
    return [
        (decode_html(p.read_bytes())[0], f"http://{p.relative_to(root).parts[0]}/")
        for p in paths[:: max(1, len(paths) // 80)]
    ]


def both_ways(html: str, url: str) -> tuple[tuple, tuple]:
    """The spider's extraction and the cleaner's (balanced, precision, recall) of a page with
    the gate and with trafilatura's own comparison."""
    results = []
    for comparison in (extract.gated_compare_extraction, trafilatura.external.compare_extraction):
        trafilatura.core.compare_extraction = comparison
        try:
            results.append(
                (extract_page(html, url),)
                + tuple(
                    extract_text(html, url=url, **kw)
                    for kw in ({}, {"favor_precision": True}, {"favor_recall": True})
                )  # fmt: skip
            )
        finally:
            extract.gate_compare_extraction()
    return results[0], results[1]


def test_the_gate_is_installed_for_trafilatura():
    assert trafilatura.core.compare_extraction is extract.gated_compare_extraction


def test_another_trafilatura_runs_its_own_comparison(monkeypatch):
    """On a release the gate was not checked against, trafilatura's comparison is left as
    it is."""
    monkeypatch.setattr(trafilatura, "__version__", "9.9.9")
    trafilatura.core.compare_extraction = trafilatura.external.compare_extraction
    try:
        assert extract.gate_compare_extraction() is False
        assert trafilatura.core.compare_extraction is trafilatura.external.compare_extraction
    finally:
        monkeypatch.undo()
        assert extract.gate_compare_extraction() is True
    assert trafilatura.core.compare_extraction is extract.gated_compare_extraction


def test_the_gate_was_checked_against_this_trafilatura():
    """The gate restates when trafilatura's comparison can change a text; another release
    may change that: check ``gated_compare_extraction`` against its ``compare_extraction``
    and readability fork, then update ``GATE_CHECKED_TRAFILATURA``."""
    assert trafilatura.__version__ == extract.GATE_CHECKED_TRAFILATURA


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data's html is not here")
def test_the_gate_changes_no_result_on_real_pages():
    before = list(extract.COMPARISONS)
    for html, url in real_pages():
        gated, full = both_ways(html, url)
        assert gated == full, url
    skipped, run = (a - b for a, b in zip(extract.COMPARISONS, before, strict=True))
    assert skipped > 0 and run > 0  # both ways taken on these pages


def test_the_gate_changes_no_result_on_generated_pages(small_web: Path):
    for html, url in generated_pages(small_web):
        gated, full = both_ways(html, url)
        assert gated == full, url


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data's html is not here")
def test_the_bound_is_at_least_readabilitys_text():
    """The length trafilatura's comparison measures for readability's text never exceeds
    :func:`readability_length_bound` of the tree readability gets."""
    pages = [html for html, _ in real_pages()] + [
        "<html><body><script>var a = 1;</script><div>短</div><iframe src='https://www.youtube.com/embed/x'>"
        "</iframe><style>p {}</style>" + ARTICLE + "</body></html>",
        "<html><body>" + "<div>  a  <span> b </span>\n c </div>" * 50 + "</body></html>",
    ]  # fmt: skip
    for html in pages:
        tree = lxml_html.fromstring(html)
        bound = readability_length_bound(tree)
        summary = trafilatura.external.try_readability(tree)
        text = trim(
            trafilatura.external.tostring(summary, method="text", encoding="utf-8").decode()
        )
        assert len(text) <= bound


def test_a_clean_article_skips_the_comparison_and_a_layout_table_does_not():
    article = f"<html><head><title>t</title></head><body><article>{ARTICLE}</article></body></html>"
    # a layout table: trafilatura's first pass keeps a table and no paragraph
    plain = "".join(
        f"第{i}段：国务院常务会议研究部署经济工作，会议强调抓好落实。" for i in range(8)
    )
    rows = "".join(f"<tr><td>{plain[:60]}</td><td>{plain[60:120]}</td></tr>" for _ in range(4))
    table = (f"<html><body><table><tr><td><a href='/'>首页</a> <a href='/a'>要闻</a></td></tr>"
             f"{rows}</table></body></html>")  # fmt: skip
    for html, skips in ((article, True), (table, False)):
        before = list(extract.COMPARISONS)
        text = extract_page(html, "http://example.cn/a.html").text
        assert "第3段" in text
        assert (extract.COMPARISONS[0] > before[0]) is skips
        assert (extract.COMPARISONS[1] > before[1]) is not skips
