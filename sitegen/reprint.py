"""Reprints, reprints with added material, and hard negatives: pure functions shared by the
test web and the dedup set.

* :func:`make_reprint` is a **positive** (a near-duplicate of the original): the same article
  as another site republishes it — an editor's note, a "来源：…" source line and a
  "责任编辑：…" line added, paragraph breaks moved (merged or split), a few characters edited,
  the title rewritten ("转载：" prefix, a suffix, or a synonym swap).
* :func:`add_commentary` (a long added commentary, at least as long as the article itself) is
  also a **positive** since issue 17, item 3: a page that contains most of an accepted
  document is a duplicate of it, whatever it adds. (It was a hard negative before, after the
  feature-code paper's definition of Peng, Zhao, Zheng & Yu; the test web's ground truth and
  the dedup set's labels changed with the issue, the pages did not.)
* :func:`cut_half` (only the first half) is a **hard negative**: it shares a lot of text but
  does not contain the original.

Every function takes its randomness from the ``random.Random`` it is given, so a seed fixes
the output; none of them does I/O.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from sitegen.articles import Article, split_paragraphs

#: Sites that reprints credit (all fictitious outlets or generic attributions).
SOURCE_NAMES = ("华夏日报网", "东方新闻网", "京华在线", "南岭晚报", "综合报道", "网络")
EDITOR_NAMES = ("王磊", "李娜", "张伟", "刘洋", "陈静", "杨帆", "赵敏", "黄强", "周婷", "吴昊")
EDITOR_NOTES = (
    "编者按：本文转载自{src}，文章观点仅代表作者本人，不代表本站立场。",
    "【编者按】本站转载此文出于传递更多信息之目的，如有侵权请联系删除。",
    "（本文转自{src}，略有删节）",
    "编者按：以下内容来自{src}，供读者参考。",
)
#: Headings of the commentary :func:`add_commentary` adds.
COMMENTARY_HEADINGS = ("【网友评论】", "【延伸阅读】", "【记者观察】", "【专家点评】")
TITLE_SYNONYMS = (
    ("表示", "称"),
    ("近日", "日前"),
    ("将", "拟"),
    ("称", "表示"),
    ("发布", "公布"),
    ("举行", "召开"),
    ("上涨", "走高"),
    ("下跌", "走低"),
    ("图", "组图"),
    ("或", "可能"),
    ("仅售", "只卖"),
    ("曝光", "公开"),
)
# Small character edits: typical typo/variant swaps of Chinese copy.
CHAR_SWAPS = {
    "的": "地",
    "地": "的",
    "得": "的",
    "在": "再",
    "再": "在",
    "做": "作",
    "作": "做",
    "，": ",",
    "。": ".",
    "：": ":",
    "“": '"',
    "”": '"',
    "已": "己",
    "那": "哪",
}


def _rewrite_title(title: str, rng: random.Random, source: str) -> str:
    title = re.sub(r"[（(](?:组图|图|多图)[)）]$", "", title)
    choice = rng.randrange(4)
    if choice == 0:
        return "转载：" + title
    if choice == 1:
        return title + rng.choice(("（转载）", "（转）", f"（{source}）", "[图文]"))
    if choice == 2:
        for a, b in rng.sample(TITLE_SYNONYMS, len(TITLE_SYNONYMS)):
            if a in title:
                return title.replace(a, b, 1)
        return title + "（转载）"
    # headline reorder: swap the two halves around a space when there is one
    parts = title.split(" ")
    if len(parts) == 2 and all(parts):
        return f"{parts[1]} {parts[0]}"
    return "[转载]" + title


def _edit_chars(paragraphs: list[str], rng: random.Random, edits: int) -> list[str]:
    paras = list(paragraphs)
    for _ in range(edits):
        idx = rng.randrange(len(paras))
        text = paras[idx]
        if len(text) < 4:
            continue
        positions = [i for i, ch in enumerate(text) if ch in CHAR_SWAPS]
        op = rng.randrange(3)
        if op == 0 and positions:
            pos = rng.choice(positions)
            text = text[:pos] + CHAR_SWAPS[text[pos]] + text[pos + 1 :]
        elif op == 1:
            pos = rng.randrange(1, len(text) - 1)
            if not text[pos].isdigit():
                text = text[:pos] + text[pos + 1 :]
        else:
            pos = rng.randrange(1, len(text))
            text = text[:pos] + rng.choice("的了是也都") + text[pos:]
        paras[idx] = text
    return paras


def _rebreak(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Change paragraph breaks: merge two neighbours and/or split a long paragraph."""
    paras = list(paragraphs)
    if len(paras) >= 2 and rng.random() < 0.7:
        i = rng.randrange(len(paras) - 1)
        paras[i : i + 2] = [paras[i] + paras[i + 1]]
    longest = max(range(len(paras)), key=lambda i: len(paras[i]))
    pieces = split_paragraphs(paras[longest], target=max(40, len(paras[longest]) // 3))
    if len(pieces) >= 2:
        cut = rng.randrange(1, len(pieces))
        paras[longest : longest + 1] = ["".join(pieces[:cut]), "".join(pieces[cut:])]
    return paras


def make_reprint(article: Article, rng: random.Random, *, edits: int = 3) -> Article:
    """Return a reprint of ``article``: a near-duplicate (positive pair) of the original.

    Adds an editor's note (first paragraph), a "来源：…" line and a "责任编辑：…" line (last
    paragraphs), changes paragraph breaks, makes ``edits`` small character edits and rewrites
    the title. The id is ``{article.id}-r{n}``; category, source and date are kept.
    """
    source = article.source or rng.choice(SOURCE_NAMES)
    body = _rebreak(article.paragraphs, rng)
    body = _edit_chars(body, rng, edits)
    paras = []
    if rng.random() < 0.7:
        paras.append(rng.choice(EDITOR_NOTES).format(src=source))
    paras.extend(body)
    paras.append(f"来源：{source}")
    paras.append(f"责任编辑：{rng.choice(EDITOR_NAMES)}")
    return article.with_changes(
        id=f"{article.id}-r{rng.randrange(1000, 10000)}",
        title=_rewrite_title(article.title, rng, source),
        paragraphs=paras,
    )


def cut_half(article: Article) -> Article:
    """Return only the first half of ``article``'s body (a hard negative: a different page).

    Whole paragraphs are kept while they fit in half of the characters; a single long
    paragraph is cut at the sentence end nearest to its middle.
    """
    total = sum(len(p) for p in article.paragraphs)
    half = total // 2
    kept: list[str] = []
    used = 0
    for para in article.paragraphs:
        if used + len(para) <= half:
            kept.append(para)
            used += len(para)
            continue
        need = half - used
        ends = [m.end() for m in re.finditer(r"[。！？!?]", para)]
        cut = min(ends, key=lambda e: abs(e - need)) if ends else need
        if 0 < cut < len(para) and (cut <= need * 1.5 or not kept):
            kept.append(para[:cut])
        elif not kept:
            kept.append(para[: max(need, 1)])
        break
    return article.with_changes(id=f"{article.id}-half", paragraphs=kept)


def add_commentary(article: Article, rng: random.Random, other_texts: Sequence[str]) -> Article:
    """Return ``article`` followed by a long commentary (a copy of ``article``: issue 17).

    The commentary is made of sentences drawn from ``other_texts`` (other articles' texts),
    under a "【网友评论】"/"【延伸阅读】"-style heading, and is at least as long as the article.
    """
    sentences = [
        s
        for text in other_texts
        for s in re.findall(r"[^。！？!?\n]+[。！？!?]", text)
        if len(s) > 8
    ]
    if not sentences:
        raise ValueError("add_commentary needs other_texts with at least one sentence")
    target = sum(len(p) for p in article.paragraphs)
    heading = rng.choice(COMMENTARY_HEADINGS)
    added: list[str] = [heading]
    length = 0
    para = ""
    order = rng.sample(range(len(sentences)), len(sentences))
    i = 0
    while length < target:
        sent = sentences[order[i % len(order)]]
        i += 1
        para += sent
        length += len(sent)
        if len(para) > 150:
            added.append(para)
            para = ""
    if para:
        added.append(para)
    return article.with_changes(
        id=f"{article.id}-comm", paragraphs=list(article.paragraphs) + added
    )
