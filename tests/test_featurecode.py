"""Feature code + length (Peng, Zhao, Zheng & Yu; after Zhang et al. 2002)."""

from __future__ import annotations

import random

import pytest

from dedup import featurecode as fc
from dedup.base import Doc, make_detector
from dedup.storage import make_storage
from sitegen.articles import Article
from sitegen.reprint import add_commentary, cut_half, make_reprint
from topicrawl.errors import ConfigError

TEXT = (
    "北京时间今天上午，国家统计局发布了最新数据。数据显示经济运行总体平稳，就业形势保持稳定。"
    "专家认为下半年仍有一定压力，需要继续加大政策支持力度。"
)


def test_codes_are_l_chinese_characters_each_side_of_the_period():
    # first 。 : "...发布了最新数据" | "数据显示经济..." -> 5 Chinese characters a side,
    # punctuation (，) skipped when counting
    assert fc.all_codes(TEXT, L=5) == [
        (tuple("了最新数据"), tuple("数据显示经")),
        (tuple("势保持稳定"), tuple("专家认为下")),
    ]
    assert fc.feature_codes(TEXT, L=5) == [(tuple("了最新数据"), tuple("数据显示经"))]
    # a period without L characters on one side gives no code
    assert fc.all_codes("短句。" + TEXT, L=5)[0] == (tuple("了最新数据"), tuple("数据显示经"))
    assert fc.text_length("北京，2024年。abc") == 3  # 北 京 年


def test_english_codes_use_words_and_full_stops():
    text = "He went home. Then he slept well at night. The end is near for all of us. Bye 3.5 now"
    assert fc.all_codes(text, lang="en", L=3) == [
        (("he", "went", "home"), ("then", "he", "slept")),
        (("well", "at", "night"), ("the", "end", "is")),
        (("all", "of", "us"), ("bye", "3", "5")),
    ]
    assert fc.text_length(text, lang="en") == 21


def test_lcs_and_tolerant_matching_by_hand():
    assert fc.lcs_length("了最新数据", "了最近数据") == 4
    assert fc.lcs_length("abcde", "bcdef") == 4
    code = (tuple("了最新数据"), tuple("数据显示经"))
    one_edit = (tuple("了最近数据"), tuple("数据显示经"))
    two_edits = (tuple("了最近数据"), tuple("数据表示经"))
    two_one_side = (tuple("了近新数多"), tuple("数据显示经"))
    assert fc.codes_match(code, one_edit, tol=1)
    assert not fc.codes_match(code, one_edit, tol=0)
    assert fc.codes_match(code, two_edits, tol=1)  # one edit on each side
    assert not fc.codes_match(code, two_one_side, tol=1)
    assert fc.codes_match(code, two_one_side, tol=2)


def test_length_ratio_rule():
    assert fc.length_ok(100, 110, a=1.10)
    assert not fc.length_ok(100, 111, a=1.10)
    assert fc.length_ok(0, 0) and not fc.length_ok(0, 5)


def test_deletion_variants_are_an_exact_lcs_index():
    rng = random.Random(3)
    for _ in range(300):
        a = [rng.choice("abcd") for _ in range(5)]
        b = [rng.choice("abcd") for _ in range(5)]
        for tol in (1, 2):
            shared = set(fc.deletion_variants(a, tol)) & set(fc.deletion_variants(b, tol))
            assert bool(shared) == (fc.lcs_length(a, b) >= 5 - tol)


def _article(text: str) -> Article:
    from datetime import date

    return Article("n1", "财经", "国家统计局发布最新数据", text.split("\n"), None, date(2020, 1, 1))


LONG = "\n".join(
    [
        "北京时间今天上午，国家统计局发布了最新经济数据。数据显示经济运行总体平稳，就业形势保持稳定。",
        "专家认为下半年仍有一定压力，需要继续加大政策支持力度。消费市场逐步回暖，服务业增长明显加快。",
        "工业生产保持增长，高技术制造业增加值同比增长较快。固定资产投资结构继续优化，民间投资有所恢复。",
        "进出口总体平稳，贸易结构持续改善。居民收入稳步增长，城乡居民收入差距继续缩小。",
        "国家统计局新闻发言人表示，下一阶段将继续做好统计监测工作。各地区各部门要坚持稳中求进。",
    ]
)


def test_half_and_commentary_pages_fail_the_papers_length_rule_reprints_pass_multi():
    """The paper's rule; the cascade calls the commentary page a copy (issue 17, item 3)."""
    original = _article(LONG)
    rng = random.Random(7)
    half = cut_half(original).text
    commented = add_commentary(original, rng, [TEXT * 3]).text
    for mode in ("first", "multi"):
        assert not fc.is_duplicate(LONG, half, codes=mode)
        assert not fc.is_duplicate(LONG, commented, codes=mode)
    reprint = make_reprint(original, random.Random(11), edits=2).text
    assert fc.is_duplicate(LONG, reprint, codes="multi", k=5, m=2)
    assert not fc.is_duplicate(LONG, TEXT * 4, codes="multi")


def test_first_code_breaks_on_an_added_lead_sentence_multi_does_not():
    note = "编者按：本文转载自某日报网，仅代表作者观点。"
    assert not fc.is_duplicate(LONG, note + LONG, codes="first")
    assert fc.is_duplicate(LONG, note + LONG, codes="multi")


@pytest.mark.parametrize("tol", [0, 1, 2])
def test_detector_lookup_remove_and_sqlite(tmp_path, tol):
    storage = make_storage({"type": "sqlite", "path": str(tmp_path / "fc.sqlite")})
    det = make_detector("featurecode", storage, tol=tol, codes="multi")
    assert det.check_and_add("orig", Doc(text=LONG)) is None
    assert det.check_and_add("other", Doc(text=TEXT * 2)) is None
    edited = LONG.replace("最新经济数据", "最新经济數据")  # one character of the code edited
    match = det.check_and_add("copy", Doc(text=edited))
    # the edited code has another hash, so the copy chooses one code the original did not:
    # 4 of its 5 codes match (>= m = 2)
    assert match is not None and match.doc_id == "orig" and match.score == pytest.approx(0.8)
    assert det.query(Doc(text=cut_half(_article(LONG)).text)) == []
    det.remove("orig")
    assert det.query(Doc(text=edited)) == []
    assert det.storage.hget(det.key("docs"), "orig") is None


def test_first_mode_detector_matches_tolerant_code():
    det = make_detector("featurecode", make_storage(None))
    det.add("orig", Doc(text=LONG))
    edited = LONG.replace("最新经济数据", "最新经济數据", 1)
    assert [m.doc_id for m in det.query(Doc(text=edited))] == ["orig"]
    assert det.query(Doc(text=LONG + LONG)) == []  # same code, twice the length
    exact = make_detector("featurecode", make_storage(None), tol=0)
    exact.add("orig", Doc(text=LONG))
    assert exact.query(Doc(text=edited)) == []
    assert [m.doc_id for m in exact.query(Doc(text=LONG + "补充一句。"))] == ["orig"]
    en = "Shares rose sharply on Monday morning. Traders said the rally was broad and strong."
    det.add("en", Doc(text=en, lang="en"))
    assert [m.doc_id for m in det.query(Doc(text=en.replace("broad", "wide"), lang="en"))] == ["en"]


def test_bad_options():
    with pytest.raises(ConfigError):
        make_detector("featurecode", make_storage(None), codes="all")
    with pytest.raises(ConfigError):
        make_detector("featurecode", make_storage(None), tol=5, L=5)
    with pytest.raises(ConfigError):
        fc.units("x", lang="fr")


@pytest.mark.redis
def test_detector_on_redis(redis_url):
    import uuid

    storage = make_storage({"type": "redis", "url": redis_url, "namespace": f"t-{uuid.uuid4()}"})
    try:
        det = make_detector("featurecode", storage, codes="multi", tol=1)
        assert det.check_and_add("orig", Doc(text=LONG)) is None
        edited = LONG.replace("最新经济数据", "最新经济數据", 1)
        assert det.check_and_add("copy", Doc(text=edited)).doc_id == "orig"
        det.remove("orig")
        assert storage.keys("featurecode:") == []
    finally:
        storage.clear()
        storage.close()


def test_method_lang_routes_doc_languages():
    assert [fc.method_lang(x) for x in ("zh", "zh-CN", "", None, "en", "de")] == [
        "zh",
        "zh",
        "zh",
        "zh",
        "en",
        "en",
    ]
    det = make_detector("featurecode", make_storage(None))
    en = "Shares rose sharply on Monday morning. Traders said the rally was broad and strong."
    det.add("en", Doc(text=en, lang="en-US"))
    assert [m.doc_id for m in det.query(Doc(text=en, lang="en-GB"))] == ["en"]
