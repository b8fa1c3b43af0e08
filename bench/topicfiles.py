"""Words-only topic files for the ten cnews categories, from a fixed recipe.

The recipe never looks at a test web (the webs are built from ``corpus/cnews_train.txt``):

* eight categories have a THUCNews headline class (``corpus/thucnews_titles_dev.txt``, 10,000
  headlines, a different source than the cnews articles): their 30 topic words are the
  candidate words (the crawl's own extractor) with the highest χ² of a word-present /
  class 2×2 table (scikit-learn ``chi2`` over binary counts), among words that occur in at
  least 3 headlines, more often in the class than elsewhere, and are not numbers;
* 家居 and 时尚 have no headline class: their 30 words are written by hand, once, from the
  category name alone (:data:`HAND_WORDS`), as a user would.

Every weight is 1 (a words-only topic with the defaults). ``python bench/topicfiles.py OUT``
writes ``OUT/<pinyin>.toml`` and prints the words.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: cnews category -> (file stem, THUCNews headline classes or None)
CATEGORIES: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "体育": ("tiyu", ("sports",)),
    "娱乐": ("yule", ("entertainment",)),
    "家居": ("jiaju", None),
    "房产": ("fangchan", ("realty",)),
    "教育": ("jiaoyu", ("education",)),
    "时尚": ("shishang", None),
    "时政": ("shizheng", ("politics",)),
    "游戏": ("youxi", ("game",)),
    "科技": ("keji", ("science",)),
    "财经": ("caijing", ("finance", "stocks")),
}

#: hand-written word lists for the categories without a headline class (from the name only)
HAND_WORDS: dict[str, list[str]] = {
    "家居": "家居 家具 装修 装饰 家装 客厅 卧室 厨房 卫生间 卫浴 沙发 地板 瓷砖 橱柜 "
    "灯具 窗帘 墙面 建材 涂料 软装 布艺 门窗 收纳 餐桌 衣柜 床垫 吊顶 壁纸 设计师 户型".split(),
    "时尚": "时尚 潮流 服装 搭配 时装 时装周 美容 护肤 化妆 彩妆 发型 模特 秀场 香水 珠宝 "
    "腕表 手袋 裙装 高跟鞋 配饰 妆容 造型 街拍 单品 面料 奢侈品 设计师 品牌 明星 款式".split(),
}

N_WORDS = 30
MIN_DF = 3


def headline_words(classes: tuple[str, ...], *, n: int = N_WORDS) -> list[str]:
    """The ``n`` candidate words of the THUCNews headlines with the highest χ² for
    ``classes`` (positively associated, document frequency >= MIN_DF)."""
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.feature_selection import chi2

    from relevance.topic import DEFAULT_POS
    from relevance.weights import CandidateExtractor
    from topicrawl.data import data_path

    names = data_path("corpus/thucnews_titles_classes.txt").read_text("utf-8").split()
    extract = CandidateExtractor(pos=DEFAULT_POS)
    texts, labels = [], []
    for line in data_path("corpus/thucnews_titles_dev.txt").read_text("utf-8").splitlines():
        if "\t" not in line:
            continue
        text, label = line.rsplit("\t", 1)
        texts.append(extract(text))
        labels.append(names[int(label)] in classes)
    y = np.asarray(labels)
    vec = CountVectorizer(analyzer=lambda ws: ws, binary=True, min_df=MIN_DF)
    x = vec.fit_transform(texts)
    score, _ = chi2(x, y)
    df_in = np.asarray(x[y].sum(axis=0)).ravel() / max(1, y.sum())
    df_out = np.asarray(x[~y].sum(axis=0)).ravel() / max(1, (~y).sum())
    vocab = vec.get_feature_names_out()
    order = [i for i in np.argsort(-score)
             if df_in[i] > df_out[i] and not str(vocab[i]).isdigit()]  # fmt: skip
    return [str(vocab[i]) for i in order[:n]]


def topic_words(category: str) -> list[str]:
    """The recipe's words for a cnews category."""
    _stem, classes = CATEGORIES[category]
    return HAND_WORDS[category] if classes is None else headline_words(classes)


def topic_text(category: str, words: list[str]) -> str:
    stem, classes = CATEGORIES[category]
    how = (
        f"top {N_WORDS} words by chi-square on THUCNews headlines ({', '.join(classes)})"
        if classes
        else "hand-written from the category name"
    )
    lines = [f"# bench/topicfiles.py: words-only topic, {how}; all weights 1", f'name = "{category}"',
             'language = "zh"', "", "[words]"]  # fmt: skip
    lines += [f'"{w}" = 1.0' for w in words]
    return "\n".join(lines) + "\n"


def write_topics(out: Path, categories: list[str] | None = None) -> dict[str, Path]:
    """Write the words-only topic file of each category into ``out``; category -> path."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for cat in categories or list(CATEGORIES):
        path = out / f"{CATEGORIES[cat][0]}.toml"
        path.write_text(topic_text(cat, topic_words(cat)), encoding="utf-8")
        paths[cat] = path
    return paths


#: the shipped generic contrast set (``[learning] contrast = "thucnews"``): every THUCNews
#: headline class's words, by the same recipe
CONTRAST_DIR = ROOT / "topics" / "contrast" / "thucnews"


def write_contrast_set(out: Path = CONTRAST_DIR) -> dict[str, Path]:
    """Write one words-only topic file per THUCNews headline class into ``out``."""
    from topicrawl.data import data_path

    out.mkdir(parents=True, exist_ok=True)
    names = data_path("corpus/thucnews_titles_classes.txt").read_text("utf-8").split()
    paths = {}
    for name in names:
        words = headline_words((name,))
        lines = [f"# bench/topicfiles.py --contrast: top {N_WORDS} words by chi-square on the "
                 f"THUCNews headlines of class {name}; all weights 1", f'name = "{name}"',
                 'language = "zh"', "", "[words]"] + [f'"{w}" = 1.0' for w in words]  # fmt: skip
        paths[name] = out / f"{name}.toml"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


if __name__ == "__main__" and sys.argv[1:2] == ["--contrast"]:
    for name, p in write_contrast_set().items():
        print(name, p)
elif __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "bench" / "out" / "topics")
    for cat, p in write_topics(target).items():
        from relevance.topic import load_topic

        print(cat, p, " ".join(load_topic(p).words))
