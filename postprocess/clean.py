"""Boilerplate cleaning: turn a stored page into corpus text.

trafilatura finds the main text; on Chinese news sites it still leaves boilerplate around it:
copyright and ICP lines, editor/source lines, share/print/comment widgets, related-news link
lists and lines that every page of a site repeats. This module removes those line by line,
counts every removal per rule, and drops a page whose text is too short or mostly links after
cleaning (the focused-crawling paper's failure case: a page whose "main text" is only the
site's copyright notice).

Line rules (each switchable, each counted in ``CleanResult.removed``):

``blank``       lines without a letter: empty, list/table markers (``-``, ``|  |``), bare
                numbers, counters and timestamps
``copyright``   版权所有, Copyright ©, All Rights Reserved, ICP备/ICP证, 公网安备, 举报电话…
``disclaimer``  免责声明, "仅代表作者个人观点", "并不表明…立场", 转载请注明…, 声明：…
``editor``      责任编辑/编辑/来源/原标题/本文来源/作者/发布时间 lines, stand-alone 记者/作者
                bylines, role-name lines ("编辑 某某 校对 某某"), whole-line 【…】 headers
``widget``      share/print/comment/follow widgets: 分享到, 打印, 收藏, 评论, 字号 大 中 小, 扫一扫…
``navigation``  breadcrumbs (当前位置：首页 > …), 上一篇/下一篇, 返回首页 (a trailing
                "返回XX首页>>" is trimmed from a paragraph and counted, the paragraph kept)
``host_lines``  lines that recur on many pages of the same host (:class:`HostLineModel`)
``link_lines``  short lines whose text is (almost) all anchor text of the page (related-news
                lists); a line contained in the page's <title> is kept
``custom``      lines matching the user's ``extra_patterns`` regular expressions
``related``     a trailing related block: a link box's heading and trailing link lines (with
                the HTML); a related heading near the end with what follows it, headlines run
                together after the last sentence, a trailing 我要评论 (text alone)

Page rules (a dropped page gets ``CleanResult.text = None`` and a reason):
``no_text`` (nothing extracted), ``mostly_links`` (anchor text > ``max_link_share`` of the
text; 1.0 switches it off), ``too_short`` (fewer than ``min_chars`` non-space characters left).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from postprocess.layout import choose_text, main_block_text, paragraph_breaks, table_cells
from topicrawl.errors import ConfigError, ResourceMissingError

__all__ = [
    "LINE_RULES",
    "CleanResult",
    "Cleaner",
    "HostLineModel",
    "extract_text",
    "anchor_texts",
    "normalize_line",
]

#: Line rules in the order they are applied.
LINE_RULES = (
    "blank",
    "copyright",
    "disclaimer",
    "editor",
    "widget",
    "navigation",
    "custom",
    "host_lines",
    "link_lines",
    "title",
    "related",
)

# --------------------------------------------------------------------------------------------
# Patterns. Traditional variants are in character classes so that traditional pages are
# cleaned even when OpenCC conversion is off.

_LEAD = r"^[\s\-*•·|【\[（(<《]*"  # list/table markers and opening brackets before a keyword
_SEP = r"\s*[:：丨|]"

_COPYRIGHT = re.compile(
    r"版[权權]所有|copyright|©|\(c\)\s*(?:19|20)\d\d|all\s+rights\s+reserved|"
    r"ICP\s*[备備证證]|ICP\s*\d{5,}|公[网網]安[备備]|"
    r"不良信息[举舉][报報]|[举舉][报報](?:电话|邮箱|電話|郵箱|中心)|"
    r"(?:服[务務]|[经經][营營]|[节節]目|出版)许可[证證]|"
    r"未[经經](?:本[网站报報]|作者)?(?:书面)?(?:授[权權]|许可|同意).{0,12}(?:[转轉][载載]|复制|使用|镜像)|"
    r"[严嚴]禁(?:[转轉][载載]|复制|镜像)",
    re.I,
)

_DISCLAIMER = re.compile(
    r"免[责責][声聲]明|仅代表(?:作者|其|个人|本人)(?:本人|个人)?(?:的)?(?:观点|看法|立场)|"
    r"仅供其表达个人看法|并不(?:表明|代表).{0,12}(?:立场|观点)|不代表本(?:网|站|报|刊|平台)|"
    r"如有侵[权權]|侵[权權].{0,8}(?:删除|联系)|[转轉][载載发發]请注明|请注明(?:本文)?(?:出处|链接|来源)|"
    r"^[【\[]?(?:特别)?[声聲]明[】\]]?\s*[:：]|"
    r"版[权權]归.{0,16}所有",
)
#: a longer line that opens with a disclaimer heading
_DISCLAIMER_HEAD = re.compile(_LEAD + r"免[责責][声聲]明")

_EDITOR_KEYS = (
    "责任编辑|責任編輯|责编|責編|编辑|編輯|主编|审核|審核|审校|校对|校對|监制|值班编辑|"
    "来源|來源|本文来源|文章来源|稿件来源|新闻来源|消息来源|信息来源|资料来源|图片来源|图源|"
    "原标题|原標題|原文标题|原文链接|原创|作者|撰文|记者|記者|通讯员|摄影|攝影|"
    "出品|策划|发布时间|发布日期|發布時間|更新时间|最后更新|稿源|本文转自|转自|转载自|转载于|"
    "来源于|采写|撰稿"
)
_EDITOR_START = re.compile(_LEAD + r"(?:" + _EDITOR_KEYS + r")" + _SEP)
#: A metadata line or table cell: dates, times, page numbers ("第10版"), "KEY：value" fields
#: and reporter bylines; a line is metadata when little else is left once these are removed
#: ("2019-07-26 来源：新华网 作者：通讯员 刘洁 当日新闻").
_META_PARTS = re.compile(
    r"(?:19|20)\d\d\s*[-年/.]\s*\d{1,2}\s*[-月/.]\s*\d{1,2}\s*日?|\d{1,2}:\d\d(?::\d\d)?|"
    r"第\s*\d+\s*版|星期[一二三四五六日天]|"
    r"(?:" + _EDITOR_KEYS + r")\s*[:：丨|]\s*\S{0,20}(?:\s+[\u4e00-\u9fff·]{2,4}(?=\s|$))?|"
    r"(?:本报|特约|本台|本刊)?(?:记者|通讯员|實習生|实习生)\s*[\u4e00-\u9fff·]{2,3}(?=\s|$)"
)
_META_HAS = re.compile(r"(?:19|20)\d\d\s*[-年/.]\s*\d{1,2}|(?:" + _EDITOR_KEYS + r")\s*[:：]")


def _meta_has(text: str) -> bool:
    """``_META_HAS.search(text)``, with a quick test first: a match holds "19" or "20" (a
    date) or a colon (a field); most lines of an article have none (the pattern's scan of
    every position for its ~50 keys is 30 times the cost)."""
    if not ("：" in text or ":" in text or "20" in text or "19" in text):
        return False
    return _META_HAS.search(text) is not None
#: A reprint note at the head of a paragraph: "编者按：本文转载自…。", "（本文转自…，略有删节）".
_NOTE_HEAD = re.compile(
    r"^\s*(?:(?:【编者按】|编者按\s*[:：])[^。）)]{0,60}?"
    r"(?:转载|转自|来自|侵权|仅代表|不代表|参考)|[（(]\s*本文转自)[^。）)]{0,60}[。）)]\s*"
)
#: Source and editor fields glued to the end of a paragraph: "… 来源：新华网 责任编辑：王磊".
_EDITOR_TAIL = re.compile(
    r"(?:\s+|(?<=[。！？”」）)]))(?:(?:来源|來源|稿源|本文来源|责任编辑|責任編輯|责编|编辑)[:：]\s*"
    r"[^\s，。：:]{1,20}\s*){1,3}$"
)
_ORIGINAL_TITLE = re.compile(_LEAD + r"(?:原标题|原標題|原文标题)" + _SEP)
#: The same fields in the middle of a merged table cell, after a sentence end or a space.
_EDITOR_MID = re.compile(
    r"(?:(?<=[。！？”」）)])|(?<=\s))\s*(?:(?:来源|來源|稿源|本文来源|责任编辑|責任編輯|责编)[:：]\s*"
    r"[^\s，。：:]{1,20}\s+){1,3}(?=\S)"
)
#: Reprint markers around a title: "[转载]…", "转载：…", "…（转载）".
_TITLE_MARKS = re.compile(r"^(?:\[转载\]|【转载】|转载[:：])|(?:[（(]转载?[）)])$")
_EDITOR_ANY = re.compile(r"(?:责任编辑|責任編輯|责编|責編)\s*[:：]")
# A stand-alone byline: "扬子晚报记者 张楠", "澎湃新闻记者 段彦超 廖艳", "（记者 陆一夫）".
_BYLINE = re.compile(
    r"^[\s(（【\[]*(?:《[^》]{1,10}》)?[\u4e00-\u9fff]{0,10}"
    r"(?:特约记者|记者|記者|通讯员|通訊員|实习生|作者)[\s:：]*"
    r"[\u4e00-\u9fff·]{2,4}(?:(?:\s+|、|，)[\u4e00-\u9fff·]{2,4}){0,4}\s*(?:摄|攝|报道|報道)?"
    r"[\s)）】\]]*$"
)

#: A line of role–name pairs without colons: "编辑 刘晓阳 校对 李铭".
_ROLE_NAMES = re.compile(
    r"^(?:(?:责任编辑|责编|编辑|校对|审核|审校|监制|记者|摄影|摄像|作者|采写)\s+"
    r"[\u4e00-\u9fff·]{2,4}\s*){1,4}$"
)
#: A header line in square brackets: "【记者观察】", "【文/观察者网专栏作者 王文】".
_BRACKET_LINE = re.compile(r"^【[^【】。！？]{1,30}】$")

#: Tokens a widget line is made of; a line is a widget when nothing but these, digits and
#: punctuation remain.
WIDGET_TOKENS = (
    "分享到", "分享至", "分享", "转发", "轉發", "打印本页", "打印此文", "打印", "列印",
    "关闭窗口", "關閉窗口", "关闭", "收藏本文", "加入收藏", "已收藏", "收藏", "我要评论",
    "发表评论", "查看评论", "查看更多评论", "更多评论", "网友评论", "条评论", "评论", "評論",
    "跟贴", "跟帖", "人参与", "参与", "字号", "字體", "字体", "大", "中", "小", "默认",
    "扫一扫", "扫描二维码", "二维码", "关注我们", "关注", "微信公众号", "公众号", "微信",
    "微博", "朋友圈", "QQ空间", "QQ好友", "QQ", "腾讯微博", "新浪微博", "豆瓣", "人人网",
    "手机看新闻", "手机版", "客户端", "APP专享", "APP", "返回顶部", "回到顶部", "顶部",
    "纠错", "糾錯", "举报", "舉報", "点赞", "赞", "顶", "踩", "复制链接", "复制", "链接",
    "更多", "展开全文", "阅读全文", "阅读", "点击", "知道了", "取消", "确定", "登录", "注册",
    "免注册", "快速登录", "消息", "通知", "公告", "热帖", "热词", "热门推荐", "相关推荐",
    "推荐阅读", "相关阅读", "相关新闻", "相关文章", "延伸阅读", "好文", "钦佩", "喜欢",
    "泪奔", "可爱", "思考", "share", "print", "email", "e-mail", "tweet", "facebook",
    "twitter", "linkedin", "whatsapp", "comments", "comment", "older post", "newer post",
    "home", "subscribe to", "post comments", "atom", "followers", "follow", "like",
)  # fmt: skip
_WIDGET_TOKEN_RE = re.compile(
    "|".join(re.escape(t) for t in sorted(WIDGET_TOKENS, key=len, reverse=True)), re.I
)
#: A CJK ideograph no widget token holds: a line with one is no widget line (ideographs have no
#: case, so no token matches it even under re.I, and the filler does not match a letter).
_NOT_WIDGET = re.compile(
    "(?![" + "".join(sorted({ch for t in WIDGET_TOKENS for ch in t if "\u4e00" <= ch <= "\u9fff"}))
    + "])[\u4e00-\u9fff]"
)
_WIDGET_PHRASE = re.compile(
    r"扫描?二维码|扫一扫|关注我们|关注.{0,8}(?:公众号|微信|微博)|(?:下载|安装).{0,10}客户端|"
    r"目前没有(?:热门)?跟[贴帖]|欢迎你发表观点|点击(?:查看|进入|投票|这里|下载|关注)|阅读原文|"
    r"分享到[:：]|字号[:：]?\s*大\s*中\s*小|打印本页|关闭窗口|查看更多评论|"
    r"^\d+人参与\d*(?:评论)?$|登录超时|稍后再试|请稍后重试",
    re.I,
)
_NAVIGATION = re.compile(
    _LEAD + r"(?:您?(?:当前|现在|所在)的?位置|您的位置|当前位置|上一篇|下一篇|上一条|下一条|"
    r"上一页|下一页)" + r"\s*[:：>]|^返回.{0,8}首页\s*(?:>>|》|→)?$|^首页\s*(?:>|»|>>|/)"
)
#: A "back to the home page" link glued to the end of the last paragraph: trimmed, not dropped.
_NAV_TAIL = re.compile(r"\s*返回.{0,8}首页\s*(?:>>|》|→)\s*$")
#: Characters a widget line may hold besides its tokens.
_FILLER = re.compile(r"[\s\d\W_]*", re.U)
_BLANK = re.compile(r"^[\s\W\d_]*$", re.U)
#: Table cell separators of trafilatura's text output ("|", escaped "\\|").
_CELL_SPLIT = re.compile(r"\\?\|")


_LEAD_MARKERS = re.compile(r"[\s\-*•·|>]+")


def _strip_markers(line: str) -> str:
    r"""The line without list bullets, table pipes and surrounding space: what
    ``re.sub(r"^[\s\-*•·|>]+|[\s|]+$", "", line).strip()`` gives, without that regex's scan
    of every position for a trailing run (tests/test_postprocess.py holds them equal)."""
    lead = _LEAD_MARKERS.match(line)
    rest = line[lead.end() :] if lead else line
    out = rest.rstrip()  # (str.isspace is re's \s)
    while out.endswith("|"):
        out = out[:-1].rstrip()
    return out.strip()


def normalize_line(line: str) -> str:
    """The key a line is counted under: NFKC, lower case, digits as 0, letters and digits only.

    Digits are folded so that "1032人参与308评论" and "57人参与11评论" count as one line.
    """
    s = unicodedata.normalize("NFKC", line).lower()
    s = re.sub(r"[\W_]+", "", s)
    return re.sub(r"\d+", "0", s)


def _line_key(norm: str) -> int:
    return int.from_bytes(hashlib.blake2b(norm.encode("utf-8"), digest_size=8).digest(), "big")


# --------------------------------------------------------------------------------------------
class HostLineModel:
    """Per-host counts of normalised lines over the pages seen, to find template lines.

    A line is boilerplate on host *h* when the host has at least ``min_pages`` pages observed
    and the line occurs on at least ``min_line_pages`` of them and on at least ``min_share`` of
    them (the site-style-tree idea of Yi, Liu & Li 2003, "Eliminating noisy information in web
    pages", reduced to lines: content repeated across a site's pages is presentation, not
    content). Lines longer than ``max_line_chars`` are not tracked (templates are short). When a
    host holds more than ``max_entries`` distinct lines, lines seen once are forgotten, which
    bounds memory on big sites; a forgotten line that recurs starts counting again.

    Thread-safe: ``observe`` and the look-ups hold one lock.
    """

    def __init__(
        self,
        *,
        min_pages: int = 5,
        min_line_pages: int = 3,
        min_share: float = 0.3,
        max_line_chars: int = 300,
        max_entries: int = 50_000,
    ):
        if min_pages < 1 or min_line_pages < 1:
            raise ConfigError("host_min_pages and host_min_line_pages must be at least 1")
        if not 0.0 < min_share <= 1.0:
            raise ConfigError(f"host_min_share must be in (0, 1], got {min_share!r}")
        self.min_pages = int(min_pages)
        self.min_line_pages = int(min_line_pages)
        self.min_share = float(min_share)
        self.max_line_chars = int(max_line_chars)
        self.max_entries = int(max_entries)
        self._pages: Counter[str] = Counter()
        self._lines: dict[str, Counter[int]] = {}
        self._lock = threading.Lock()

    def _keys(self, lines: Iterable[str]) -> set[int]:
        keys = set()
        for line in lines:
            if len(line) > self.max_line_chars:
                continue
            norm = normalize_line(line)
            if norm:
                keys.add(_line_key(norm))
        return keys

    def observe(self, host: str, lines: Iterable[str]) -> None:
        """Count one page of ``host``: each distinct line once."""
        keys = self._keys(lines)
        with self._lock:
            self._pages[host] += 1
            counts = self._lines.setdefault(host, Counter())
            counts.update(keys)
            if len(counts) > self.max_entries:
                for key in [k for k, c in counts.items() if c <= 1]:
                    del counts[key]

    def pages(self, host: str) -> int:
        """How many pages of ``host`` were observed."""
        with self._lock:
            return self._pages[host]

    def threshold(self, host: str) -> int | None:
        """The page count a line needs on ``host`` to be boilerplate, or None (not active)."""
        with self._lock:
            n = self._pages[host]
        if n < self.min_pages:
            return None
        return max(self.min_line_pages, _ceil(self.min_share * n))

    def is_boilerplate(self, host: str, line: str) -> bool:
        """True when ``line`` recurs on enough pages of ``host``."""
        need = self.threshold(host)
        if need is None or len(line) > self.max_line_chars:
            return False
        norm = normalize_line(line)
        if not norm:
            return False
        with self._lock:
            return self._lines.get(host, Counter()).get(_line_key(norm), 0) >= need

    def hosts(self) -> list[str]:
        with self._lock:
            return sorted(self._pages)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable snapshot (keys are 64-bit line hashes in hex)."""
        with self._lock:
            return {
                "version": 1,
                "params": {
                    "min_pages": self.min_pages,
                    "min_line_pages": self.min_line_pages,
                    "min_share": self.min_share,
                    "max_line_chars": self.max_line_chars,
                    "max_entries": self.max_entries,
                },
                "pages": dict(self._pages),
                "lines": {
                    h: {format(k, "x"): c for k, c in counts.items()}
                    for h, counts in self._lines.items()
                },
            }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HostLineModel:
        if data.get("version") != 1:
            raise ConfigError(f"unknown HostLineModel format version {data.get('version')!r}")
        model = cls(**data.get("params", {}))
        model._pages = Counter({h: int(n) for h, n in data.get("pages", {}).items()})
        model._lines = {
            h: Counter({int(k, 16): int(c) for k, c in counts.items()})
            for h, counts in data.get("lines", {}).items()
        }
        return model

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict()), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> HostLineModel:
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except FileNotFoundError as exc:
            raise ResourceMissingError(f"host-line model {path} not found") from exc


def _ceil(x: float) -> int:
    i = int(x)
    return i if i >= x - 1e-9 else i + 1


# --------------------------------------------------------------------------------------------
@dataclass
class CleanResult:
    """The cleaned text (None when the page is dropped), the drop reason, lines removed per rule.

    ``reextracted`` is True when the given main text was dropped and the text comes from a new
    extraction of the HTML with the cleaner's own trafilatura settings (``reextract``).
    """

    text: str | None
    dropped: str | None = None
    removed: Counter[str] = field(default_factory=Counter)
    reextracted: bool = False
    fallback: bool = False
    #: the first clean's drop reason when the page was extracted again (kept or not)
    reextract_reason: str | None = None


def _load_tree(html: str | bytes):
    import trafilatura

    return trafilatura.load_html(html)


def extract_text(
    html: Any,
    *,
    url: str | None = None,
    include_comments: bool = False,
    include_tables: bool = True,
    favor_precision: bool = False,
    favor_recall: bool = False,
) -> str:
    """trafilatura's main text of a page (``html``: str, bytes or an lxml tree), '' if none.

    Comments are left out by default: reader comments are not corpus text.
    """
    import trafilatura

    text = trafilatura.extract(
        html,
        url=url,
        include_comments=include_comments,
        include_tables=include_tables,
        favor_precision=favor_precision,
        favor_recall=favor_recall,
        output_format="txt",
    )
    return text or ""


def anchor_texts(tree: Any) -> set[str]:
    """The texts of the page's ``<a>`` elements as letters only (:func:`_letters`, ≥ 2)."""
    out = set()
    if tree is None:
        return out
    for a in tree.iter("a"):
        try:
            t = _letters(a.text_content())
        except ValueError:
            continue
        if len(t) >= 2:
            out.add(t)
    return out


def _letters(text: str) -> str:
    """Letters only: no space, digits or punctuation (a ranked list's "1 63675 title" is a
    link line as much as "title")."""
    return _NON_LETTER.sub("", text)


_NON_LETTER = re.compile(r"[\W\d_]+", re.U)


def _link_chars(line: str, anchors: set[str], sorted_anchors: list[str], max_len: int) -> int:
    """How many letters of ``line`` are covered by anchor texts (both compared as letters
    only, :func:`_letters`).

    A line equal to an anchor text is all link; a line up to ``max_len`` characters is also
    searched for the anchor texts of at least 5 letters it contains (shorter ones, like a
    menu's "中国", would count ordinary words as links).
    """
    s = _letters(line)
    if not s:
        return 0
    if s in anchors:
        return len(s)
    if "|" in line:
        # a table row (trafilatura writes cells as "| a | b |", a literal "|" as "\\|"): a
        # menu laid out as a table has short cells that are each an anchor text
        cells = [c for c in (_letters(x) for x in _CELL_SPLIT.split(line)) if c]
        linked = sum(len(c) for c in cells if c in anchors)
        if cells and linked == sum(len(c) for c in cells):
            return len(s)
        if linked:
            return linked
    if len(s) > max_len:
        return 0
    covered = 0
    for a in sorted_anchors:
        if len(a) > len(s) or len(a) < 5:
            continue
        if a in s:
            n = s.count(a)
            covered += n * len(a)
            s = s.replace(a, "")
            if not s:
                break
    return covered


# --------------------------------------------------------------------------------------------
_DEFAULTS: dict[str, Any] = {
    # extraction (when no text is given)
    "include_comments": False,
    "include_tables": True,
    "favor_precision": False,
    "favor_recall": False,
    "reextract": True,  # extract again from the HTML when the given text is dropped
    # ... also when it was dropped as mostly links although the fallback was tried (see clean)
    "reextract_mostly_links": False,
    # line rules on/off
    "blank": True,
    "copyright": True,
    "disclaimer": True,
    "editor": True,
    "widget": True,
    "navigation": True,
    "host_lines": True,
    "link_lines": True,
    "title": True,  # the headline repeated in the first lines of the text
    "related": True,  # a trailing block of link lines and short headings
    "tables": True,  # layout-table rows split into cells, menu cells removed
    "fallback": True,  # readability-lxml when trafilatura disagrees with the main block
    "extra_patterns": (),
    # limits
    "max_rule_line_chars": 100,
    "max_editor_line_chars": 160,
    "max_link_line_chars": 80,
    "min_link_line_share": 0.8,
    # page rules
    "min_chars": 50,
    "max_link_share": 0.5,
    # host-line model
    "host_min_pages": 5,
    "host_min_line_pages": 3,
    "host_min_share": 0.3,
    # Traditional -> Simplified Chinese
    "to_simplified": False,
}


class Cleaner:
    """trafilatura's main text, then line rules, then page rules; see the module docstring.

    Built from keyword arguments or from a topic file's ``[clean]`` table with
    :meth:`from_config` (same keys; unknown keys raise :class:`ConfigError`). Usable inline
    from several threads: the host-line model and the running totals hold locks.
    """

    DEFAULTS = _DEFAULTS

    def __init__(self, *, host_model: HostLineModel | None = None, **options: Any):
        unknown = set(options) - set(_DEFAULTS)
        if unknown:
            raise ConfigError(
                f"unknown [clean] option(s): {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(_DEFAULTS))}"
            )
        cfg = {**_DEFAULTS, **options}
        for key, default in _DEFAULTS.items():
            value = cfg[key]
            if isinstance(default, bool) and not isinstance(value, bool):
                raise ConfigError(f"[clean] {key} must be true or false, got {value!r}")
            if isinstance(default, int | float) and not isinstance(default, bool):
                if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                    raise ConfigError(f"[clean] {key} must be a number >= 0, got {value!r}")
        for key in ("min_link_line_share", "max_link_share", "host_min_share"):
            if cfg[key] > 1:
                raise ConfigError(f"[clean] {key} is a share in [0, 1], got {cfg[key]!r}")
        if isinstance(cfg["extra_patterns"], str) or not all(
            isinstance(p, str) for p in cfg["extra_patterns"]
        ):
            raise ConfigError("[clean] extra_patterns must be a list of regular expressions")
        self.config = cfg
        try:
            self._custom = [re.compile(p) for p in cfg["extra_patterns"]]
        except (re.error, TypeError) as exc:
            raise ConfigError(f"[clean] extra_patterns: bad regular expression: {exc}") from exc
        self.host_model = host_model or HostLineModel(
            min_pages=cfg["host_min_pages"],
            min_line_pages=cfg["host_min_line_pages"],
            min_share=cfg["host_min_share"],
        )
        #: ``(html, url, options) -> text or None``: where a page's main text is extracted
        #: from its HTML string instead of here (the crawl's extraction pool: trafilatura's
        #: fallbacks then load their data there); None from it: extracted here
        self.remote_extract: Callable[[str, str | None, dict[str, Any]], str | None] | None = None
        self._opencc = None
        if cfg["to_simplified"]:
            try:
                from opencc import OpenCC
            except ImportError as exc:  # pragma: no cover - dependency of the project
                raise ResourceMissingError(
                    "to_simplified needs OpenCC: pip install opencc-python-reimplemented"
                ) from exc
            self._opencc = OpenCC("t2s")
        self._stats: Counter[str] = Counter()
        self._lock = threading.Lock()

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any] | None, *, host_model: HostLineModel | None = None
    ) -> Cleaner:
        """A cleaner from a ``[clean]`` table (a mapping); None means all defaults."""
        return cls(host_model=host_model, **dict(config or {}))

    # -- totals --------------------------------------------------------------------------
    @property
    def stats(self) -> Counter[str]:
        """Running totals: ``pages``, ``kept``, ``dropped/<reason>``, ``removed/<rule>``,
        ``reextracted``; ``reextract/<reason>`` and ``reextracted/<reason>``: the pages
        extracted again and those it kept, by the drop reason of the given text;
        ``reextract_skipped/<reason>``: the dropped pages not extracted again (see clean)."""
        with self._lock:
            return Counter(self._stats)

    def _count(self, result: CleanResult, *, skipped: bool = False) -> None:
        with self._lock:
            if skipped:  # dropped, and not extracted again by the rule in clean()
                self._stats[f"reextract_skipped/{result.dropped}"] += 1
            self._stats["pages"] += 1
            if result.dropped:
                self._stats[f"dropped/{result.dropped}"] += 1
            else:
                self._stats["kept"] += 1
            if result.reextracted:
                self._stats["reextracted"] += 1
            if result.reextract_reason:  # per drop reason of the given text: tried, kept
                self._stats[f"reextract/{result.reextract_reason}"] += 1
                if result.reextracted:
                    self._stats[f"reextracted/{result.reextract_reason}"] += 1
            if result.fallback:
                self._stats["fallback"] += 1
            for rule, n in result.removed.items():
                self._stats[f"removed/{rule}"] += n

    # -- steps ---------------------------------------------------------------------------
    def _main_text(self, html: Any, text: str | None, url: str | None,
                   source: Any = None) -> str:  # fmt: skip
        """``text``, else trafilatura's main text of ``html`` (a tree of ``source`` or
        ``source`` itself), by :attr:`remote_extract` when set and ``source`` is the HTML
        string: trafilatura parses the string as :func:`_load_tree` does and copies a tree it
        is given, so the text is the same."""
        if text:
            return text
        if html is None or (isinstance(html, str | bytes) and not html):
            return ""
        c = self.config
        options = {key: c[key] for key in ("include_comments", "include_tables",
                                           "favor_precision", "favor_recall")}  # fmt: skip
        if self.remote_extract is not None and isinstance(source, str) and source:
            got = self.remote_extract(source, url, options)
            if got is not None:
                return got
        return extract_text(html, url=url, **options)

    def _lines(self, text: str) -> list[str]:
        if self._opencc is not None:
            text = self._opencc.convert(text)
        return [ln.strip() for ln in text.splitlines()]

    def observe(
        self,
        *,
        html: Any = None,
        text: str | None = None,
        host: str | None = None,
        url: str | None = None,
    ) -> None:
        """Count a page's lines in the host-line model without cleaning it (a learning pass)."""
        if not self.config["host_lines"]:
            return
        host = _host_of(host, url)
        lines = self._expand(self._lines(self._main_text(html, text, url)), Counter())
        lines = [ln for ln in lines if ln]
        if host and lines:
            self.host_model.observe(host, lines)

    def line_rule(self, line: str) -> str | None:
        """The first static rule (no host model, no links) that removes ``line``, or None."""
        c = self.config
        if c["blank"] and _BLANK.match(line):
            return "blank"
        core = _strip_markers(line)
        n = len(core)
        short = n <= c["max_rule_line_chars"]
        if c["copyright"] and short and _COPYRIGHT.search(core):
            return "copyright"
        if c["disclaimer"] and (
            (short and _DISCLAIMER.search(core))
            or (n <= 3 * c["max_rule_line_chars"] and _DISCLAIMER_HEAD.match(core))
        ):
            return "disclaimer"
        if c["editor"] and (
            (
                n <= c["max_editor_line_chars"]
                and _EDITOR_START.match(core)
                # not a paragraph that opens with a byline ("作者：某某 新款…")
                and (n <= 40 or _ORIGINAL_TITLE.match(core)
                     or len(_FILLER.sub("", _META_PARTS.sub("", core))) <= 20)
            )
            or (_NOTE_HEAD.match(core) and _NOTE_HEAD.match(core).end() >= len(core))
            or (n <= 60 and (_EDITOR_ANY.search(core) or _BYLINE.match(core)
                             or _ROLE_NAMES.match(core)))
            or _BRACKET_LINE.match(line.strip())
            or (n <= 100 and _meta_has(core) and len(_FILLER.sub("", _META_PARTS.sub(
                "", core))) <= 8)  # fmt: skip
        ):
            return "editor"
        if c["widget"] and n <= 80:
            # the line has a letter (else it was blank), so an empty rest means tokens only
            if (not _NOT_WIDGET.search(core) and _FILLER.fullmatch(_WIDGET_TOKEN_RE.sub("", core))
                    or _WIDGET_PHRASE.search(core)):  # fmt: skip
                return "widget"
        if c["navigation"] and short and _NAVIGATION.search(core):
            return "navigation"
        if self._custom and any(p.search(core) for p in self._custom):
            return "custom"
        return None

    def clean(
        self,
        *,
        html: Any = None,
        text: str | None = None,
        host: str | None = None,
        url: str | None = None,
        observe: bool = True,
    ) -> CleanResult:
        """Clean one page.

        ``html``: the page source (str, bytes or an lxml tree; used to extract the main text
        when ``text`` is not given and to find anchor texts for the link rules); ``text``: the
        main text already extracted by trafilatura; ``host``: the site (default: from ``url``).
        With ``observe`` the page is first counted in the host-line model (online learning
        during a crawl); a second pass over stored pages passes ``observe=False``.

        When the given ``text`` is dropped and ``reextract`` is on, the main text is extracted
        again from ``html`` with the cleaner's settings and cleaned; the result says so
        (``reextracted``) and ``stats["reextracted"]`` counts it. This recovers articles that a
        stricter extraction (e.g. ``favor_precision``) missed.

        Not for a page dropped as ``mostly_links`` when ``fallback`` is on (unless
        ``reextract_mostly_links``): the fallback has already weighed readability's text
        against the page's main block, and such a page is a list or link page that the second
        extraction drops too (measured in docs/scale.md: none kept on the local webs; the real
        163 articles it recovers with the fallback off, the fallback keeps at the first
        clean). Counted in ``stats["reextract_skipped/mostly_links"]``.
        """
        result = self._clean(html=html, text=text, host=host, url=url, observe=observe)
        skipped = False
        if result.dropped and text and html is not None and self.config["reextract"]:
            reason = result.dropped
            if self.reextracts(reason):
                again = self._clean(html=html, text=None, host=host, url=url, observe=False)
                if not again.dropped:
                    again.reextracted = True
                    result = again
                result.reextract_reason = reason
            else:
                skipped = True
        self._count(result, skipped=skipped)
        return result

    def reextracts(self, reason: str) -> bool:
        """Whether a page whose given text is dropped for ``reason`` is extracted again
        (``reextract`` on): not one dropped as ``mostly_links`` when ``fallback`` is on,
        unless ``reextract_mostly_links`` (see :meth:`clean`)."""
        c = self.config
        if not c["reextract"]:
            return False
        return reason != "mostly_links" or not c["fallback"] or c["reextract_mostly_links"]

    def _clean(self, *, html, text, host, url, observe) -> CleanResult:
        c = self.config
        removed: Counter[str] = Counter()
        tree = None
        need_tree = (c["link_lines"] or c["max_link_share"] < 1) and html is not None
        if need_tree and isinstance(html, str | bytes):
            tree = _load_tree(html) if html else None
        elif need_tree:
            tree = html
        main = self._main_text(tree if tree is not None else html, text, url, source=html)
        fallback = False
        block = None
        if tree is not None and main and (c["fallback"] or c["tables"]):
            block = main_block_text(tree)
        if c["fallback"] and main and tree is not None:
            main, source = choose_text(main, tree, _html_str(html, tree), block=block)
            fallback = source != "trafilatura"
        lines = self._expand(self._lines(main), removed, block.splitlines() if block else ())
        host = _host_of(host, url)
        if c["host_lines"] and observe and host:
            self.host_model.observe(host, [ln for ln in lines if ln])

        heads = _heads_of(tree) if tree is not None and c["title"] else ""
        kept: list[str] = []
        for line in lines:
            if c["navigation"] and _NAV_TAIL.search(line) and len(line) > 20:
                line = _NAV_TAIL.sub("", line)
                removed["navigation"] += 1
            if c["editor"] and len(line) > 40:
                line = self._trim_editor(line, removed)
            rule = self.line_rule(line)
            if rule is None and heads and len(kept) < 3 and _is_title(line, heads):
                rule = "title"  # the headline repeated at the top of the text
            if rule is None and c["host_lines"] and host:
                if self.host_model.is_boilerplate(host, line):
                    rule = "host_lines"
            if rule is None:
                kept.append(line)
            else:
                removed[rule] += 1
        if not any(ln for ln in lines):
            return CleanResult(None, "no_text", removed, fallback=fallback)
        if c["related"]:
            kept = _related_block(kept, removed)

        anchors = anchor_texts(tree) if tree is not None else set()
        if anchors:
            sorted_anchors = sorted(anchors, key=len, reverse=True)
            max_len = c["max_link_line_chars"]
            link = [_link_chars(ln, anchors, sorted_anchors, max_len) for ln in kept]
            sizes = [len(_letters(ln)) for ln in kept]
            total = sum(sizes)
            if total and sum(link) / total > c["max_link_share"]:
                return CleanResult(None, "mostly_links", removed, fallback=fallback)
            is_link = [
                bool(size)
                and len(ln) <= c["max_link_line_chars"]
                and lc / size >= c["min_link_line_share"]
                for ln, lc, size in zip(kept, link, sizes, strict=True)
            ]
            if c["related"]:
                for i, ln in enumerate(kept):  # a box's heading: "热点推荐" over its links
                    if not is_link[i] and _short(ln) and _heads_link_box(tree, ln):
                        is_link[i] = True
                        removed["related"] += 1
                        kept[i] = ""
                pairs = [(ln, f) for ln, f in zip(kept, is_link, strict=True) if ln]
                kept, is_link = [p[0] for p in pairs], [p[1] for p in pairs]
                cut = _related_tail(kept, is_link)
                if cut < len(kept):
                    removed["related"] += len(kept) - cut
                    kept, is_link = kept[:cut], is_link[:cut]
            if c["link_lines"]:
                title = _title_of(tree)
                out = []
                for ln, flag in zip(kept, is_link, strict=True):
                    if flag and re.sub(r"\s+", "", ln) not in title:
                        removed["link_lines"] += 1
                    else:
                        out.append(ln)
                kept = out

        body = "\n".join(kept).strip()
        if len(re.sub(r"\s+", "", body)) < c["min_chars"]:
            return CleanResult(None, "too_short", removed, fallback=fallback)
        return CleanResult(body, None, removed, fallback=fallback)

    def _expand(
        self, lines: list[str], removed: Counter[str], paras: Sequence[str] = ()
    ) -> list[str]:
        """Layout-table rows split into their cells (one line each): rows of at most two
        cells, or with a cell over 60 characters (a data table's row of several short cells
        stays whole); a menu cell ("首页 \\| 体育 \\| …": at least three short parts) is
        removed as navigation. A long cell is cut into the paragraphs of the page's main
        block ``paras`` (:func:`postprocess.layout.paragraph_breaks`)."""
        if not self.config["tables"]:
            return lines
        out: list[str] = []
        for line in lines:
            cells = table_cells(line)
            if not cells:  # not a table row, or an empty one (the blank rule counts it)
                if paras and cells is None and len(line) > 400 and line.startswith("- "):
                    out += paragraph_breaks(line, list(paras))  # a list item holding them all
                else:
                    out.append(line)
                continue
            if len(cells) > 2 and max(len(x) for x in cells) <= 60:
                out.append(line)  # a data table's row (several short cells) stays whole
                continue
            for cell in cells:
                parts = [x.strip() for x in cell.split("\\|")]
                if len(parts) >= 3 and all(len(x) <= 12 for x in parts):
                    removed["navigation"] += 1
                    continue
                cell = cell.replace("\\|", "|")
                if paras and len(cell) > 200:
                    out += paragraph_breaks(cell, list(paras))
                else:
                    out.append(cell)
        return out

    @staticmethod
    def _trim_editor(line: str, removed: Counter[str]) -> str:
        """A reprint note at the head and source/editor fields at the tail of a paragraph are
        cut off (counted as ``editor``); the paragraph stays."""
        m = _NOTE_HEAD.match(line)
        if m and m.end() < len(line):
            line = line[m.end() :]
            removed["editor"] += 1
        m = _EDITOR_TAIL.search(line)
        if m and m.start() > 20:
            line = line[: m.start()].rstrip()
            removed["editor"] += 1
        line, n = _EDITOR_MID.subn(" ", line)
        if n:
            removed["editor"] += n
        return line


def _html_str(html: Any, tree: Any) -> str | None:
    """The page as a string for readability-lxml (decoded bytes, or the serialised tree)."""
    if isinstance(html, str):
        return html
    if isinstance(html, bytes):
        from topicrawl.extract import decode_html

        return decode_html(html)[0]
    try:
        from lxml import html as lxml_html

        return lxml_html.tostring(tree, encoding="unicode")
    except (TypeError, ValueError):
        return None


def _heads_of(tree: Any) -> str:
    """The page's <title>, <h1> and og:title texts, letters only, joined."""
    try:
        parts = tree.xpath("//title//text() | //h1//text() | //meta[@property='og:title']/@content")
    except (AttributeError, ValueError):
        return ""
    return "\n".join(_letters(p) for p in parts if p)


def _is_title(line: str, heads: str) -> bool:
    """A short line that is the page's headline (reprint markers like "[转载]" and metadata
    fields such as "最后更新: 2019-09-07 09:27:48" aside)."""
    core = _TITLE_MARKS.sub("", _strip_markers(line)).strip()
    if _meta_has(core):
        core = _META_PARTS.sub("", core).strip()
    letters = _letters(core)
    return 4 <= len(letters) <= 60 and "。" not in core[:-1] and letters in heads


def _short(line: str) -> bool:
    """A heading-like line: at most 15 letters, no sentence end."""
    return 0 < len(_letters(line)) <= 15 and not re.search(r"[。！？!?]$", line.strip())


def _heads_link_box(tree: Any, line: str) -> bool:
    """Whether ``line`` is the text of an element whose box (the element or one of its three
    nearest ancestors) is at least twice as long as the line and at least half anchor text:
    the heading of a link list ("热点推荐", "相关阅读")."""
    try:
        found = tree.xpath("//*[normalize-space(text())=$t]", t=line.strip())[:3]
    except (AttributeError, ValueError):
        return False
    n = len(_letters(line))
    for el in found:
        box = el
        for _ in range(3):
            box = box.getparent()
            if box is None:
                break
            total = len(_letters(box.text_content() or ""))
            if total >= 2 * n:
                linked = sum(len(_letters(a.text_content() or "")) for a in box.iter("a"))
                if linked >= 0.5 * total:
                    return True
                break
    return False


def _related_tail(lines: list[str], is_link: list[bool]) -> int:
    """Index where a trailing "related / hot" block starts (``len(lines)`` when none): the
    longest tail made only of link lines and short headings (≤ 15 characters, no sentence
    end) that holds at least two link lines."""
    cut, links = len(lines), 0
    for i in range(len(lines) - 1, -1, -1):
        ln = lines[i]
        short = len(_letters(ln)) <= 15 and not re.search(r"[。！？!?]$", ln.strip())
        if not (is_link[i] or short):
            break
        links += is_link[i]
        if links >= 2:
            cut = i
    # headings right above the block's first link line go with it
    return cut if links >= 2 else len(lines)


#: A "related" box's heading (letters only): "相关新闻", "延伸 · 推荐", "猜你喜欢"…
_RELATED_HEAD = re.compile(
    r"(?:相关|相關)(?:新闻|新聞|阅读|閱讀|报道|報道|文章|链接|推荐|专题|资讯)|延伸(?:阅读|推荐)|"
    r"扩展阅读|推荐阅读|(?:热点|热门|精彩|为您|为你)推荐|猜你喜欢|往期回顾|更多(?:新闻|精彩)"
)
#: Sentence ends, and the punctuation a run of headlines glued to the last sentence lacks.
_SENT_END_CHARS = "。！？」”"
#: the first letters of :data:`_RELATED_HEAD`'s headings: a line whose first letter (what
#: :func:`_letters` keeps first) is none of them is no heading
_RELATED_FIRSTS = "相延扩推热精为猜往更"
_FIRST_LETTER = re.compile(r"[^\W\d_]")
_HEAD_COLON = re.compile(r"[:：]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_CLAUSE = re.compile(r"[，,、；;：:“”\"《》\[\]【】]")
_COMMENT_TAIL = re.compile(r"\s*(?:我要评论|发表评论|查看评论)\s*$")
_COMMENT_LINKS = ("我要评论", "发表评论", "查看评论")


def _related_block(lines: list[str], removed: Counter[str]) -> list[str]:
    """The text without a trailing "related" box, judged by text alone (counted as
    ``related``):

    - a heading ("相关新闻：", "延伸 · 推荐", followed or not by headlines on its line) with
      at most six lines after it that hold at most a third of the text's letters: the heading
      and everything after it go;
    - a run of at least 20 Chinese characters glued after the last sentence end of the last line with no
      clause punctuation (headlines run together: "…出席欢迎仪式。外交部就…答问(实录)"), and
      a comment link at its end ("我要评论"), are cut off.
    """
    total = None  # the text's letters, counted once a heading is found
    for i in range(max(0, len(lines) - 7), len(lines)):
        first = _FIRST_LETTER.search(lines[i])
        if first is None or first.group() not in _RELATED_FIRSTS:
            continue  # (its letters would not start as a heading's do: a quick test first)
        head = _HEAD_COLON.split(lines[i], maxsplit=1)[0]
        letters = _letters(head[:64])  # more than 8 letters there: no heading, paragraph or not
        if len(head) > 64 and len(letters) <= 8:
            letters = _letters(head)
        if not (0 < len(letters) <= 8 and _RELATED_HEAD.fullmatch(letters)):
            continue
        if total is None:
            total = sum(len(_letters(ln)) for ln in lines)
        if 3 * sum(len(_letters(ln)) for ln in lines[i:]) <= total:
            removed["related"] += len(lines) - i
            lines = lines[:i]
            break
    while lines:
        last = lines[-1]
        if any(link in last for link in _COMMENT_LINKS):  # (the pattern's quick test)
            last = _COMMENT_TAIL.sub("", last)
        end = max(map(last.rfind, _SENT_END_CHARS)) + 1  # after the last sentence end
        if end:
            tail = last[end:]
            if len(_CJK.findall(tail)) >= 20 and not _CLAUSE.search(tail):
                last = last[:end]
        if last != lines[-1]:
            removed["related"] += 1
            lines = [*lines[:-1], last.strip()] if last.strip() else lines[:-1]
            continue
        break
    return lines


def _title_of(tree: Any) -> str:
    """The page's <title> text without spaces ('' when none)."""
    try:
        found = tree.find(".//title")
    except (AttributeError, TypeError):
        return ""
    if found is None:
        return ""
    return re.sub(r"\s+", "", found.text_content() or "")


def _host_of(host: str | None, url: str | None) -> str:
    if host:
        return host.lower()
    if url:
        return (urlsplit(url).hostname or "").lower()
    return ""
