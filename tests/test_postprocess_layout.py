"""Layout-aware cleaning: table rows, metadata lines, reprint notes, the repeated headline,
a trailing related block and the readability fallback; and, on the demo's local web, no
corpus document keeps a navigation, byline or editor line."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from postprocess.clean import Cleaner
from postprocess.gold import sitegen_gold, token_f1
from postprocess.layout import choose_text, main_block_text, table_cells

BODY = (
    "国务院联防联控机制印发通知，就进一步指导各地准确分析把握疫情和防控形势，"
    "落实分区分级差异化防控策略作出部署。通知要求各地科学精准做好防控工作。"
)
TABLE_PAGE = f"""<html><head><title>台湾南投县发生5.3级地震_京华在线</title></head><body>
<table><tr><td><a href="/">首页</a> | <a href="/s/">体育新闻</a> | <a href="/y/">娱乐新闻</a>
 | <a href="/z/">时政新闻</a></td></tr>
<tr><td>[转载]台湾南投县发生5.3级地震</td></tr>
<tr><td>2019-07-26 来源：新华网 作者：通讯员 刘洁 <a href="/d/">当日新闻</a></td></tr>
<tr><td>编者按：以下内容来自新华网，供读者参考。 {BODY} 来源：新华网 责任编辑：王磊</td></tr>
<tr><td><a href="/h/">热点推荐</a></td></tr></table></body></html>"""
TABLE_TEXT = (
    "| 首页 \\| 体育新闻 \\| 娱乐新闻 \\| 时政新闻 |  |\n| [转载]台湾南投县发生5.3级地震 |\n"
    "| 2019-07-26 来源：新华网 作者：通讯员 刘洁 当日新闻 |\n"
    f"| 编者按：以下内容来自新华网，供读者参考。 {BODY} 来源：新华网 责任编辑：王磊 |\n"
    "| 热点推荐 |"
)


def test_table_layout_page_comes_out_as_the_article():
    r = Cleaner().clean(html=TABLE_PAGE, text=TABLE_TEXT, host="www.jinghua-online.com")
    assert r.text == BODY
    assert r.removed["navigation"] == 1 and r.removed["title"] == 1
    assert r.removed["editor"] == 3  # the metadata row, the note at the head, the fields at the end
    off = Cleaner(tables=False, title=False).clean(html=TABLE_PAGE, text=TABLE_TEXT)
    assert off.text is not None and "|" in off.text  # the options are what makes the difference


def test_table_cells():
    assert table_cells("| a | b \\| c |  |") == ["a", "b \\| c"]
    assert table_cells("no table") is None


@pytest.mark.parametrize(
    "line",
    [
        "2019-07-26 来源：新华网 作者：通讯员 刘洁 当日新闻",
        "2019年2月9日 第10版 本报记者 周舟 轻量版",
        "本文转自：原文",
    ],
)
def test_metadata_lines_are_editor_lines(line):
    assert Cleaner().line_rule(line) == "editor"


def test_a_paragraph_that_opens_with_a_byline_stays():
    para = "作者：毛晓曼 新款iPod touch是最富可玩性的数码产品，虽然没有增加摄像头，但是硬件配置上的升级是它最大的亮点。"
    assert Cleaner().line_rule(para) is None


@pytest.mark.parametrize(
    "line",
    [
        "【记者观察】",
        "【文/观察者网专栏作者 王文】",
        "《棱镜》作者 周纯",
        "编辑 刘晓阳 校对 李铭",
        "（本文转自华夏日报网，略有删节）",
        "声明：证券时报力求信息真实、准确，文章提及内容仅供参考，不构成实质性投资建议。",
        "请支持独立网站，转发请注明本文链接：https://www.guancha.cn/a.shtml",
    ],
)
def test_header_byline_and_notice_lines_go(line):
    assert Cleaner().line_rule(line) in ("editor", "disclaimer")


def test_a_related_heading_and_its_block_go_without_links():
    """Text evidence alone: a "相关新闻：" heading near the end and the headlines after it, a
    comment link, and headlines run together after the last sentence."""
    text = "\n".join([BODY, BODY, "相关新闻： 香港建筑工地6名工人从高处坠下死亡 男子擦玻璃随窗扇坠楼身亡",
                     "石家庄倒楼事故已致10人遇难3人重伤 上海在建楼倒覆事故7名责任人被批捕我要评论"])
    r = Cleaner(host_lines=False).clean(text=text)
    assert r.text == f"{BODY}\n{BODY}" and r.removed["related"] == 2
    glued = BODY + "外交部和驻菲律宾大使就南海问题提出交涉胡锦涛会见越南总理呼吁中越妥善处理南海问题"
    r = Cleaner(host_lines=False).clean(text=f"{BODY}\n{glued}")
    assert r.text == f"{BODY}\n{BODY}" and r.removed["related"] == 1
    # a heading with most of the text after it is not a trailing box
    early = "\n".join(["相关阅读：", BODY, BODY])
    assert Cleaner(host_lines=False).clean(text=early).text == f"{BODY}\n{BODY}"


def test_table_cell_keeps_the_paragraphs_of_the_main_block():
    paras = [BODY.replace("通知", f"通知{i}") for i in range(3)]
    html = ("<html><body><table><tr><td><a href='/'>首页</a></td></tr><tr><td class='zw'>"
            + "".join(f"<p>&nbsp;&nbsp;{p}</p>" for p in paras) + "</td></tr></table></body></html>")
    text = "| 首页 |\n| " + " ".join(paras) + " |"
    r = Cleaner(host_lines=False).clean(html=html, text=text)
    assert r.text == "\n".join(paras)


def test_trailing_related_block_goes_with_its_headings():
    links = [f"相关新闻标题第{i}条很长很长的标题" for i in range(4)]
    html = "<html><body>" + "".join(f'<a href="/{i}">{t}</a>' for i, t in enumerate(links))
    text = "\n".join([BODY, BODY + "（完）", "为您推荐", *(f"- {i}{t}" for i, t in enumerate(links))])
    r = Cleaner(host_lines=False).clean(html=html + "</body></html>", text=text)
    assert r.text == f"{BODY}\n{BODY}（完）" and r.removed["related"] == 5


def test_fallback_replaces_an_extraction_that_missed_the_main_block():
    paras = [BODY.replace("通知", f"通知{i}") for i in range(6)]
    html = (
        "<html><body><div id='article'>" + "".join(f"<p>{p}</p>" for p in paras) + "</div>"
        "<div id='comments'><p>网友评论：这篇文章写得很好，值得一读。</p></div></body></html>"
    )
    from lxml import html as lxml_html

    tree = lxml_html.fromstring(html)
    assert main_block_text(tree).splitlines() == paras
    text, source = choose_text("网友评论：这篇文章写得很好，值得一读。", tree, html)
    assert source == "readability" and token_f1(text, "\n".join(paras)).f1 > 0.95
    # agreement: trafilatura's text is kept, readability is not run
    assert choose_text("\n".join(paras), tree, html) == ("\n".join(paras), "trafilatura")


# -- the demo's web --------------------------------------------------------------------------

#: Lines no corpus document may keep: navigation bars and table remnants, breadcrumbs,
#: date/source/author rows, editor and source lines, reprint notes, "hot" headings, 【…】
#: header lines, related-news blocks (their heading, their headlines, the comment link).
FORBIDDEN = re.compile(
    r"\||当前位置|您的位置|首页\s*[>»]|责任编辑|编者按|热点推荐|本文转自|"
    r"^(?:来源|作者|编辑|原标题|本文转自)[:：].{0,30}$|"
    r"^(?:19|20)\d\d[-年].{0,12}(?:来源|作者|记者)|^[（(]?原标题|"
    r"^【[^】]*】$|^(?:相关(?:新闻|阅读|报道|文章)|延伸阅读|推荐阅读)\s*[:：]?|我要评论$"
)


@pytest.fixture(scope="module", params=["a", "b"])
def demo_web(request, tmp_path_factory):
    from sitegen.build import build_web
    from sitegen.family_b import build_web_b

    out = tmp_path_factory.mktemp(f"web-{request.param}")
    if request.param == "a":
        build_web(out, scale="small", seed=1)  # what `topicrawl demo` builds
    else:
        build_web_b(out, scale="small", seed=1)  # the other template family
    return out


def test_no_demo_document_keeps_navigation_byline_or_editor_lines(demo_web):
    """Every article page of the demo's web (and of a family-b web), through the crawl's
    extraction and the inline cleaner (host model learning as it goes): no kept line is
    boilerplate, and the text matches the generator's article body (token F1 per template)."""
    cleaner = Cleaner()
    bad, f1 = [], {}
    for doc in sitegen_gold(Path(demo_web)):
        from topicrawl.extract import decode_html, extract_page

        html, _ = decode_html(doc.body, doc.header_charset)
        r = cleaner.clean(html=html, text=extract_page(html, doc.url).text, url=doc.url)
        if r.text is None:
            continue
        bad += [(doc.url, ln) for ln in r.text.splitlines() if FORBIDDEN.search(ln.strip())]
        f1.setdefault(doc.group, []).append(token_f1(r.text, doc.gold).f1)
    assert not bad, bad[:5]
    assert set(f1) in ({"classic", "modern", "table", "gov"},
                       {"cards", "stream", "paper", "blog", "govb"})  # fmt: skip
    assert all(statistics.mean(v) >= 0.95 for v in f1.values()), f1


def test_the_demo_webs_spliced_reprint_is_a_containment_duplicate(demo_web):
    """The demo's jinghua-online page "转载：胡锦涛等九常委为侨界十杰颁发证书" is a reprint of a
    huaxia-daily article followed by a 【…】 heading and sentences of other articles
    (``sitegen.reprint.add_commentary``). It contains the whole article, so it is a duplicate
    of it (issue 17, item 3: the ground truth puts it in the article's duplicate group) and
    the default cascade drops it by containment, though the added text is most of the page
    (the older ``max_extra`` bound, 0.4, kept it apart). The cleaner keeps that text (only the
    heading goes)."""
    import json

    from dedup.base import Doc
    from dedup.cascade import Cascade
    from dedup.containment import cleaned, shingle_sample
    from dedup.storage import MemoryStorage
    from sitegen.build import article_bodies
    from topicrawl.extract import decode_html, extract_page

    truth = json.loads((demo_web / "ground_truth.json").read_text(encoding="utf-8"))
    if truth.get("family", "a") != "a":
        pytest.skip("the demo builds family a")
    pages = {u: (p, b, h) for u, p, b, h in article_bodies(demo_web, truth)}
    url = next(u for u, (p, _, _) in pages.items()
               if p.get("reprint_extras") == "commentary" and "jinghua-online" in u)  # fmt: skip
    page = pages[url][0]
    original = page["reprint_of"]
    assert "huaxia-daily" in original and page["body"][0][:10] in pages[original][0]["body"][0]
    assert url in truth["dup_groups"][page["dup_group"]] and url not in truth["near_misses"]

    def crawl_doc(u: str) -> Doc:
        ex = extract_page(decode_html(pages[u][1], pages[u][2])[0], u)
        return Doc(ex.text, ex.title, ex.description, u, ex.published)

    a, b = crawl_doc(original), crawl_doc(url)
    sa, sb = set(shingle_sample(cleaned(a.text))), set(shingle_sample(cleaned(b.text)))
    common = len(sa & sb)
    assert common / len(sa) >= 0.9 and 1 - common / len(sb) > 0.4  # all copied, most added
    cascade = Cascade(MemoryStorage())
    cascade.check_and_add(original, a)
    dup = cascade.check_and_add(url, b).duplicate
    assert dup is not None and (dup.doc_id, dup.method) == (original, "containment")
    assert dup.score >= 0.9
    bounded = Cascade(MemoryStorage(), options={"containment": {"max_extra": 0.4}})
    bounded.check_and_add(original, a)
    assert bounded.check_and_add(url, b).duplicate is None  # the older bound kept it apart
    text = Cleaner().clean(html=decode_html(pages[url][1], pages[url][2])[0], text=b.text,
                           url=url).text  # fmt: skip
    assert "【" not in text and len(text.splitlines()) >= 5  # heading gone, paragraphs kept
    assert token_f1(text, "\n".join(p for p in page["body"] if not p.startswith("【"))).f1 > 0.99


def test_a_data_table_keeps_its_rows():
    """Rows of several short cells are data, not layout: they stay whole, numbers and all."""
    rows = "| Pos. | Piloto | Pontos | Vitórias |\n| 1 | Kyle Busch | 5040 | 5 |\n| 2 | Martin Truex Jr. | 5035 | 7 |"
    r = Cleaner(min_chars=0).clean(text=f"{BODY}\n{rows}")
    assert r.text == f"{BODY}\n{rows}" and not r.removed


def _language(node) -> set[str]:
    """Every string a finite regex (literals, classes, alternations, groups) matches."""
    from re import _parser as sre

    out = {""}
    for op, arg in node:
        if op is sre.LITERAL:
            alts = {chr(arg)}
        elif op is sre.IN:
            alts = {chr(a) for o, a in arg if o is sre.LITERAL}
            assert all(o is sre.LITERAL for o, _ in arg)
        elif op is sre.SUBPATTERN:
            alts = _language(arg[-1])
        elif op is sre.BRANCH:
            alts = set().union(*(_language(b) for b in arg[1]))
        else:
            raise AssertionError(f"not a finite pattern: {op}")
        out = {a + b for a in out for b in alts}
    return out


def test_related_heading_quick_test_holds_every_headings_first_letter():
    """The quick test before the heading pattern (a character every heading starts with) is
    derived by hand: it must hold the first letter of every string the pattern matches, so
    no heading is skipped."""
    from re import _parser as sre

    from postprocess.clean import _FIRST_LETTER, _RELATED_FIRSTS, _RELATED_HEAD, _letters

    headings = _language(sre.parse(_RELATED_HEAD.pattern))
    assert len(headings) > 20 and "相关新闻" in headings and "更多精彩" in headings
    assert all(h[0] in _RELATED_FIRSTS for h in headings)
    # the quick test's first letter is the first letter _letters keeps
    for line in ("1. 相关新闻：", "【延伸阅读】", "_x相关", "·２０相关", "  "):
        first = _FIRST_LETTER.search(line)
        assert (first.group() if first else "") == _letters(line)[:1]
    # and the block rule decides as the pattern alone did: a heading line with a colon
    text = "\n".join([BODY, BODY, "延伸阅读：某某新闻标题"])
    assert Cleaner(host_lines=False).clean(text=text).text == f"{BODY}\n{BODY}"
