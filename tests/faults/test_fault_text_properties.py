"""Property-based tests (hypothesis) of the text and URL functions that hostile pages reach:
extraction, tokenization, SpotSigs, DWDCS and Algorithm 2's URL similarity never raise on
arbitrary input, and their scores are deterministic, symmetric and in [0, 1].

Example counts are small (the whole file runs in well under a minute on a loaded machine);
:mod:`test_fault_properties` covers decoding, the frontier serializer, the address policy
and topic parsing.
"""

from __future__ import annotations

import math
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dedup import dwdcs
from dedup.base import Doc
from dedup.spotsigs import SpotSigsDetector, multiset_jaccard, spot_signatures
from dedup.storage import MemoryStorage
from relevance.urls import url_similarity
from topicrawl.extract import decode_html, extract_page
from topicrawl.segment import normalize, segment_zh

FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Chinese and Latin text with punctuation, digits, full-width forms and control characters
zh_text = st.text(
    st.sampled_from("政治中央会议政府的了在是和新闻报道发展经济，。、！？（）「」 \n\t\x00\u3000ＡＢ１２abc123.%")
    | st.characters(codec="utf-8"),
    max_size=300,
)
html_tags = st.sampled_from(["<p>", "</p>", "<div>", "</div>", "<title>", "</title>", "<br>",
                             "<script>", "</script>", "<!--", "-->", "<html lang='zh'>",
                             "<meta name='description' content='x'>", "<![CDATA[", "]]>",
                             "<h1>", "</h1>", "&nbsp;", "&#0;", "&#xD800;", "<a href='//[::1'>",
                             "</a>", "<table><tr><td>", "<?xml version='1.0'?>"])  # fmt: skip
html_soup = st.lists(html_tags | zh_text, max_size=30).map("".join)


# -- extraction ---------------------------------------------------------------------------
@FEW
@given(st.binary(max_size=4000) | html_soup.map(lambda s: s.encode("utf-8", "replace")))
def test_extract_never_raises_on_arbitrary_bytes(body: bytes) -> None:
    text, _ = decode_html(body)
    out = extract_page(text, "http://a.cn/x.html")
    assert all(isinstance(v, str) for v in (out.title, out.description, out.keywords, out.text))
    assert out.language and out.published is None or isinstance(out.published, str)
    # bounded by the page: its own characters (a NUL read as U+FFFD) and line breaks
    assert len(out.text) <= 2 * len(text) + 2 and len(out.title) <= 2 * len(text) + 2


@FEW
@given(html_soup, st.integers(50, 2000))
def test_extracted_text_is_bounded_by_the_caps(html: str, cap: int) -> None:
    """The spider's caps (``TOPICRAWL_MAX_HTML_BYTES`` on the body, then
    ``TOPICRAWL_MAX_TEXT_CHARS`` on the text) bound what a page can cost, however it is made."""
    body = ("<html><body><p>" + html * 20 + "</p></body></html>").encode("utf-8")[: cap * 4]
    text, _ = decode_html(body)
    extracted = extract_page(text).text[:cap]
    assert len(text) <= cap * 4 and len(extracted) <= cap


# -- tokenization --------------------------------------------------------------------------
@SOME
@given(zh_text)
def test_segmentation_keeps_every_character(text: str) -> None:
    tokens = segment_zh(text)
    assert all(tokens) and "".join(tokens) == normalize(text)
    assert segment_zh(text) == tokens  # deterministic (and memoised texts alike)


@SOME
@given(st.text(max_size=200))
def test_normalize_is_nfkc(text: str) -> None:
    assert normalize(text) == unicodedata.normalize("NFKC", text)


# -- SpotSigs ------------------------------------------------------------------------------
signatures = st.dictionaries(st.text(max_size=6), st.integers(1, 5), max_size=20)


@SOME
@given(signatures, signatures)
def test_multiset_jaccard_is_symmetric_and_in_unit_range(a: dict, b: dict) -> None:
    ab, ba = multiset_jaccard(a, b), multiset_jaccard(b, a)
    assert ab == ba and 0.0 <= ab <= 1.0
    assert multiset_jaccard(a, a) == (1.0 if a else 0.0)


@SOME
@given(st.lists(st.sampled_from("的 了 是 在 和 政治 会议 新闻 经济 ， 。".split()) | st.text(max_size=3),
                max_size=60))  # fmt: skip
def test_spot_signatures_are_deterministic(tokens: list[str]) -> None:
    spots = {"的": 1, "了": 1, "是": 2}
    first = spot_signatures(tokens, spots, frozenset(spots))
    assert first == spot_signatures(list(tokens), dict(spots), frozenset(spots))
    assert all(n > 0 for n in first.values())


@FEW
@given(zh_text)
def test_a_document_is_a_spotsigs_duplicate_of_itself(text: str) -> None:
    det = SpotSigsDetector(MemoryStorage(), tau=0.5)
    doc = Doc(text=text)
    sigs = det.features(doc)
    assert sigs == SpotSigsDetector(MemoryStorage(), tau=0.5).features(Doc(text=text))
    assert det.check_and_add("a", doc) is None  # the first document: nothing to duplicate
    again = det.check_and_add("b", Doc(text=text))
    if sigs:  # a text without an antecedent has no signature to compare
        assert again is not None and again.doc_id == "a" and again.score == 1.0


# -- DWDCS ---------------------------------------------------------------------------------
@FEW
@given(zh_text, zh_text)
def test_dwdcs_never_raises_and_is_symmetric(t1: str, t2: str) -> None:
    a, b = dwdcs.extract_features(t1), dwdcs.extract_features(t2)
    ab, ba = dwdcs.similarity(a, b), dwdcs.similarity(b, a)
    assert ab[0] == ba[0] and math.isclose(ab[1], ba[1], abs_tol=1e-12)
    assert 0.0 <= ab[1] <= 1.0 + 1e-12
    assert dwdcs.DWDCSFeatures.from_json(a.to_json()) == a


@SOME
@given(st.lists(st.sampled_from("政治 会议 新闻 经济 发展 政府 中央".split()), max_size=80),
       st.lists(st.sampled_from("政治 会议 新闻 经济 发展 政府 中央".split()), max_size=80))  # fmt: skip
def test_dwdcs_similarity_of_concept_sequences(s1: list[str], s2: list[str]) -> None:
    a, b = dwdcs.features_of_sequence(s1), dwdcs.features_of_sequence(s2)
    same_ab, cos_ab, var_ab = dwdcs.similarity(a, b)
    same_ba, cos_ba, var_ba = dwdcs.similarity(b, a)
    assert same_ab == same_ba and math.isclose(cos_ab, cos_ba, abs_tol=1e-12)
    assert 0.0 <= cos_ab <= 1.0 + 1e-12
    assert var_ab == var_ba or math.isclose(var_ab, var_ba, rel_tol=1e-9)
    if a.keys:  # a document with key concepts is a near-duplicate of itself
        assert dwdcs.similarity(a, a)[0]


# -- URL similarity (Algorithm 2) ----------------------------------------------------------
url_parts = st.sampled_from(["http://", "https://", "//", "ftp://", "", "www.", "news.", "a.cn",
                             "[::1]", "[", "]", ":80", ":99999", ":x", "@", "/", "//", "?q=1",
                             "#f", "%zz", "..", "politics", "2024", "\x00", " ", "国务院",
                             "xn--fiq", "\\"])  # fmt: skip
weird_urls = st.lists(url_parts | st.text(max_size=5), max_size=12).map("".join) | st.text(
    max_size=40
)


@SOME
@given(weird_urls, weird_urls)
def test_url_similarity_is_symmetric_in_unit_range_and_one_for_identical(u1: str, u2: str) -> None:
    s = url_similarity(u1, u2)
    assert s == url_similarity(u2, u1) and 0.0 <= s <= 1.0
    assert url_similarity(u1, u1) == 1.0
    paper = url_similarity(u1, u2, mode="paper")  # the published step: inf when contained
    assert paper == url_similarity(u2, u1, mode="paper") and paper >= 0.0
