"""Labelled Chinese news articles for the local test web.

The source is the THUCNews-derived ``cnews_train.txt`` (``label<TAB>text``, one article a
line). Its headline is glued to the body with no separator, so :func:`split_title` finds the
end of the headline from the dateline or lead markers that Chinese news copy starts with
("新华网北京8月3日电", "中广网…消息", "新浪体育讯", "本报讯", "（记者", "导语：", …) and, when
there is none, from a short first clause.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError

#: The ten categories of the corpus, in a fixed order.
CATEGORIES = ("体育", "娱乐", "家居", "房产", "教育", "时尚", "时政", "游戏", "科技", "财经")

#: English section slugs used in URLs (``/politics/``, ``/sports/`` …).
SECTION_SLUGS = {
    "体育": "sports",
    "娱乐": "ent",
    "家居": "home",
    "房产": "house",
    "教育": "edu",
    "时尚": "fashion",
    "时政": "politics",
    "游戏": "games",
    "科技": "tech",
    "财经": "finance",
}


@dataclass(frozen=True)
class Article:
    """One news article: the unit that the web generator renders and reprints."""

    id: str
    category: str
    title: str
    paragraphs: list[str] = field(hash=False)
    source: str | None
    published: date

    @property
    def text(self) -> str:
        """The body as plain text, one paragraph a line."""
        return "\n".join(self.paragraphs)

    @property
    def lead(self) -> str:
        """The lead: the first sentence or so of the body (for meta description).

        An editor's note at the top (编者按, 本文转自…) is skipped, as a CMS editor would.
        """
        paras = [p for p in self.paragraphs if not _NOTE.match(p)] or self.paragraphs
        first = paras[0] if paras else ""
        cut = re.search(r"[。！？]", first[20:])
        end = 20 + cut.end() if cut else len(first)
        return first[: min(end, 120)]

    def with_changes(self, **changes) -> Article:
        return replace(self, **changes)


_NOTE = re.compile(r"[【（(]?(?:编者按|本文转自|本文转载)")

# Datelines and lead markers: the body starts at the match. Ordered by specificity.
_SOURCE_NAMES = (
    r"新华网|新华社|中新社|中新网|人民网|中广网|中国新闻网|央视网|华奥星空|国际在线|东方网|千龙网|"
    r"新浪\w{2}|新浪|腾讯\w{2}|搜狐\w{2}|网易\w{2}|中关村在线|太平洋电脑网"
)
_MARKERS = [
    # 新华网北京8月3日电 / 中新网6月24日电 / 中广网呼和浩特8月3日消息 / 人民网北京6月30日电
    re.compile(
        r"(?:综合)?(?P<src>" + _SOURCE_NAMES + r")(?:\(微博\))?[\u4e00-\u9fff]{0,6}"
        r"\d{1,2}月\d{1,2}日(?:电|消息|讯)?"
    ),
    re.compile(r"(?P<src>新浪\w{2}|腾讯\w{2}|搜狐\w{2}|网易\w{2})讯"),
    re.compile(r"据?(?P<src>新华社|中新社)电"),
    re.compile(r"本报[\u4e00-\u9fff]{0,6}\d{1,2}月\d{1,2}日电"),
    re.compile(r"(?P<src>国际在线|央视网|中国网|新华网|人民网)消息"),
    re.compile(
        r"[\u4e00-\u9fff]{0,2}(?:晚报|日报|时报|商报|快报|早报|晨报|周报|考试报|青年报|信息报)"
        r"(?:讯|记者)"
    ),
    re.compile(r"本报讯|本刊讯|本报记者|本刊记者|⊙本报记者|⊙记者"),
    re.compile(
        r"[（(【\[](?!图\)|组图\)|微博\)|图）|组图）)[^）)】\]]{0,12}(?:记者|通讯员|在线|门户|行情|专稿|报道)"
    ),
    re.compile(r"(?:导语|编辑观点|编辑点评|提要|摘要|作者|记者|文)[：:]"),
    re.compile(r"北京时间\d{1,2}月\d{1,2}日"),
    re.compile(r"\s{2,}"),
]
# Body-opening words that rarely occur inside a headline.
_OPENERS = re.compile(
    r"据了解|据悉|据介绍|据报道|据[\u4e00-\u9fff]{2,8}报道|近日|日前|昨日|昨天|今天|今日|"
    r"近年来|近期|今年以来|近一段时间|截至|截止|随着|记者从|\d{1,2}月\d{1,2}日[，,]"
)
_PHOTO = re.compile(r"[（(](?:组图|图|多图|附图|视频)[)）]")

MAX_TITLE = 30
MIN_TITLE = 6


def split_title(text: str) -> tuple[str, str, str | None]:
    """Split a glued ``headline+body`` into ``(title, body, source)``.

    The title ends at the earliest dateline/lead marker found between characters 6 and 60, or
    right after a ``(图)``/``(组图)`` tag; failing that, at a body-opening word (据悉, 近日 …);
    failing that, at the first clause break when it is short enough, else after 20 characters.
    """
    text = text.strip()
    head = text[:70]
    best: tuple[int, int, str | None] | None = None  # (title_end, body_start, source)
    photo = _PHOTO.search(head)
    if photo and MIN_TITLE <= photo.start() <= 40:
        best = (photo.end(), photo.end(), None)
    for rx in _MARKERS:
        m = rx.search(head, MIN_TITLE)
        if m and m.start() <= 60 and (best is None or m.start() < best[0]):
            src = m.groupdict().get("src")
            best = (m.start(), m.start(), src)
    if best is None:
        m = _OPENERS.search(head, MIN_TITLE)
        if m and m.start() <= MAX_TITLE + 6:
            best = (m.start(), m.start(), None)
    if best is None:
        # a headline word repeated at the start of the body: 《武林OL》当梦想成真玩《武林OL》…
        for p in range(8, MAX_TITLE + 1):
            if text[p - 1] in "，。！？,!?":
                break  # past a clause break the body has begun
            if text[p : p + 3] in text[:p] and not re.match(r"[\d，。！？、：；)）”」]", text[p]):
                best = (p, p, None)
                break
    if best is None:
        m = re.search(r"[，。！？,!?]", head)
        if m and MIN_TITLE <= m.start() <= 22:
            # headline + first words of the body: keep the clause as the title only if short
            cut = m.start() if m.start() <= 20 else _word_cut(text)
            best = (cut, cut, None)
        else:
            cut = _word_cut(text)
            best = (cut, cut, None)
    title_end, body_start, source = best
    if title_end > MAX_TITLE + 6:
        # a dateline far down: the headline ran on into the body; cut at a clause break
        m = re.search(r"[，。！？,!?]", head[MIN_TITLE:])
        cut = MIN_TITLE + m.start() if m and m.start() + MIN_TITLE <= MAX_TITLE else _word_cut(text)
        title_end = body_start = cut
    title = re.sub(r"\s+", " ", text[:title_end]).strip(" ：:□⊙").rstrip("，,、；;")
    body = text[body_start:].strip().lstrip("：:，,□")
    if source:
        source = re.sub(r"\(微博\)", "", source)
        source = re.sub(r"(体育|娱乐|财经|科技|教育|时尚|游戏|房产|家居)$", "", source) or source
    return title, body, source


def _word_cut(text: str, *, target: int = 20) -> int:
    """The word boundary (jieba) nearest to ``target`` characters: a headline of no marker."""
    import jieba

    jieba.setLogLevel(60)
    bounds = [end for _, _, end in jieba.tokenize(text[: target + 12])]
    good = [b for b in bounds if 12 <= b <= target + 6]
    return min(good, key=lambda b: abs(b - target)) if good else target


_SENT = re.compile(r"[^。！？!?]*[。！？!?]+[”’」』）)]*|[^。！？!?]+$")


def split_paragraphs(body: str, *, target: int = 160) -> list[str]:
    """Group the sentences of ``body`` (cut after 。！？) into paragraphs of about ``target`` chars.

    Runs of 2+ spaces in the source are treated as paragraph breaks too.
    """
    paragraphs: list[str] = []
    for chunk in re.split(r"\s{2,}|\u3000{1,}", body):
        chunk = chunk.strip()
        if not chunk:
            continue
        current = ""
        for sent in _SENT.findall(chunk):
            sent = sent.strip()
            if not sent:
                continue
            current += sent
            if len(current) >= target:
                paragraphs.append(current)
                current = ""
        if current:
            paragraphs.append(current)
    # a dateline or a stray short piece is glued to its neighbour
    merged: list[str] = []
    carry = ""
    for para in paragraphs:
        para = carry + (" " if carry and len(carry) < 25 else "") + para if carry else para
        carry = ""
        if len(para) < 25:
            carry = para
        else:
            merged.append(para)
    if carry:
        if merged:
            merged[-1] += carry
        else:
            merged.append(carry)
    return merged or [body.strip()]


_MD = re.compile(r"(\d{1,2})月(\d{1,2})日")


def _published(article_id: str, text: str, *, year: int = 2019) -> date:
    """A deterministic date: month/day from the first date in the text when valid, else hashed."""
    m = _MD.search(text[:200])
    if m:
        try:
            return date(year, int(m.group(1)), int(m.group(2)))
        except ValueError:
            pass
    h = int(hashlib.sha1(article_id.encode()).hexdigest(), 16)
    return date.fromordinal(date(year, 1, 1).toordinal() + h % 365)


def parse_line(line: str, index: int) -> Article:
    """Parse one ``label<TAB>text`` line (``index`` is 0-based) into an :class:`Article`."""
    label, sep, text = line.rstrip("\n").partition("\t")
    if not sep or label not in CATEGORIES:
        raise ValueError(f"line {index + 1}: expected 'label<TAB>text' with a known label")
    article_id = f"cn{index + 1:04d}"
    # the corpus lost a few non-GB2312 characters (徐若瑄 -> 徐若\ufffd): restore the known one
    text = text.replace("徐若\ufffd", "徐若瑄").replace("\ufffd", "")
    title, body, source = split_title(text)
    return Article(
        id=article_id,
        category=label,
        title=title,
        paragraphs=split_paragraphs(body),
        source=source,
        published=_published(article_id, text),
    )


def load_articles(
    path: Path | None = None, *, categories: list[str] | tuple[str, ...] | None = None
) -> list[Article]:
    """Load the labelled articles (default: ``data_path("corpus", "cnews_train.txt")``)."""
    path = path or data_path("corpus", "cnews_train.txt")
    if not path.exists():
        raise ResourceMissingError(f"{path} not found: the labelled article corpus is needed")
    wanted = set(categories) if categories else None
    if wanted and not wanted <= set(CATEGORIES):
        raise ValueError(f"unknown categories {sorted(wanted - set(CATEGORIES))}")
    out: list[Article] = []
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if not line.strip():
                continue
            art = parse_line(line, i)
            if wanted is None or art.category in wanted:
                out.append(art)
    return out
