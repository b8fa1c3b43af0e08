"""Evaluation helpers: word-similarity gold sets, ROC AUC, and parameter tuning (formula 5).

* :func:`evaluate_similarity` — Spearman correlation (scipy) and coverage of a similarity
  source on ``word<TAB>word<TAB>score`` pairs (e.g. wordsim-297).
* :func:`roc_auc` — the probability that a random on-topic link outranks an off-topic one.
* :func:`tune_priority` — the search of α, β, λ and the threshold of formula 5 for the best
  harvest rate at a required recall, as the paper chose its parameters by experiment, over
  stored link-score breakdowns (``f_info``, ``anchor``, ``struct``) and page labels.
* :func:`description_weight_table` — page relevance w·Rel(f_info) + (1 − w)·Rel(text) as a
  classifier (ROC AUC, precision at recall 0.85) for several w; over a local test web with
  ``python -m relevance.evaluate pages WEB_DIR --topic FILE [--drop WORD] [--set K=V]``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from topicrawl.errors import ConfigError


def read_pairs(path: str | Path) -> list[tuple[str, str, float]]:
    """Read ``word<TAB>word<TAB>score`` lines (blank and ``#`` lines skipped)."""
    out = []
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p} not found")
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 3:
            raise ConfigError(f"{p}:{n}: expected word<TAB>word<TAB>score, got {line!r}")
        try:
            score = float(cols[2])
        except ValueError:
            raise ConfigError(f"{p}:{n}: score {cols[2]!r} is not a number") from None
        out.append((cols[0].strip(), cols[1].strip(), score))
    return out


def split_pairs(
    pairs: Sequence[tuple[str, str, float]], *, seed: int = 0
) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, float]]]:
    """A fixed random halving of a gold set: (tune half, held-out half).

    Parameters of the similarity sources are chosen on the first half only; the second is
    reported beside the whole set so that a figure the choice never saw is always shown.
    """
    import random

    idx = list(range(len(pairs)))
    random.Random(seed).shuffle(idx)
    half = set(idx[: len(pairs) // 2])
    tune = [p for i, p in enumerate(pairs) if i in half]
    held = [p for i, p in enumerate(pairs) if i not in half]
    return tune, held


@dataclass
class SimilarityEval:
    name: str
    pairs: int
    covered: int
    spearman_covered: float
    spearman_all: float
    pearson_covered: float = float("nan")

    @property
    def coverage(self) -> float:
        return self.covered / self.pairs if self.pairs else 0.0


def evaluate_similarity(
    name: str,
    pairs: Sequence[tuple[str, str, float]],
    score: Callable[[str, str], float],
    covers: Callable[[str], bool],
) -> SimilarityEval:
    """Spearman on the pairs the source covers (both words known) and on all pairs (0 for
    uncovered ones), with the coverage, and Pearson on the covered pairs."""
    from scipy.stats import pearsonr, spearmanr

    gold, pred, cov_gold, cov_pred = [], [], [], []
    for a, b, g in pairs:
        known = covers(a) and covers(b)
        s = score(a, b) if known else 0.0
        gold.append(g)
        pred.append(s)
        if known:
            cov_gold.append(g)
            cov_pred.append(s)

    def rho(x: list[float], y: list[float]) -> float:
        if len(x) < 3 or len(set(y)) < 2:
            return float("nan")
        return float(spearmanr(x, y).statistic)

    def r(x: list[float], y: list[float]) -> float:
        if len(x) < 3 or len(set(y)) < 2:
            return float("nan")
        return float(pearsonr(x, y).statistic)

    return SimilarityEval(
        name,
        len(pairs),
        len(cov_gold),
        rho(cov_gold, cov_pred),
        rho(gold, pred),
        r(cov_gold, cov_pred),
    )


def compare_on_part_pairs(
    pairs: Sequence[tuple[str, str, float]],
    combination: Callable[[str, str], float],
    part: Callable[[str, str], float],
    part_covers: Callable[[str], bool],
) -> tuple[int, float, float]:
    """Spearman of a combination and of one of its parts on the pairs that part covers.

    "A combination is at least as good as each of its parts" is a statement about the same
    pairs: a combination covers more pairs than its part, and Spearman over two different
    pair sets does not compare them. Returns (pairs, Spearman of the combination, of the
    part); nan when fewer than 3 pairs or a constant score."""
    from scipy.stats import spearmanr

    gold, comb, own = [], [], []
    for a, b, g in pairs:
        if part_covers(a) and part_covers(b):
            gold.append(g)
            comb.append(combination(a, b))
            own.append(part(a, b))

    def rho(y: list[float]) -> float:
        if len(gold) < 3 or len(set(y)) < 2:
            return float("nan")
        return float(spearmanr(gold, y).statistic)

    return len(gold), rho(comb), rho(own)


def roc_auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """ROC AUC by the rank-sum (Mann-Whitney) formula, ties counted half."""
    from scipy.stats import rankdata

    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    r = rankdata(s)
    return float((r[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def load_labels(path: str | Path, *, category: str | None = None) -> dict[str, bool]:
    """Labels of URLs: a JSON ``{url: bool|label}`` or a local test web ``ground_truth.json``
    (then ``category`` names the on-topic category), or TSV ``url<TAB>0|1``."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"labels file {p} not found")
    text = p.read_text(encoding="utf-8")
    if p.suffix == ".json":
        data = json.loads(text)
        if isinstance(data, dict) and "pages" in data and isinstance(data["pages"], dict):
            if not category:
                raise ConfigError("a ground_truth.json needs --category (e.g. 时政)")
            return {u: (e.get("category") == category) for u, e in data["pages"].items()}
        if category:
            return {u: (v == category) for u, v in data.items()}
        return {u: bool(v) for u, v in data.items()}
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise ConfigError(f"{p}:{n}: expected url<TAB>label")
        lab = cols[1].strip()
        out[cols[0].strip()] = lab == category if category else lab not in ("0", "false", "")
    return out


@dataclass
class TuneRow:
    alpha: float
    beta: float
    lam: float
    threshold: float
    followed: int
    harvest: float
    recall: float


def tune_priority(
    records: Iterable[tuple[Mapping, bool]],
    *,
    min_recall: float = 0.8,
    step: float = 0.1,
    thresholds: Sequence[float] = (
        0.0,
        0.01,
        0.02,
        0.03,
        0.04,
        0.05,
        0.075,
        0.1,
        0.125,
        0.15,
        0.2,
        0.25,
        0.3,
        0.4,
        0.5,
    ),
) -> list[TuneRow]:
    """Grid search of formula 5 (α + β + λ = 1, step ``step``) and the threshold.

    ``records`` are (link-score breakdown, target is on-topic) pairs; links found on a seed
    page (``from_seed``) are followed whatever their score, as in the crawl. Returns the rows
    that reach ``min_recall``, best harvest rate first (ties: higher recall).
    """
    rows = [(b, y) for b, y in records if b and "f_info" in b]
    if not rows:
        raise ConfigError("no stored link-score breakdowns with f_info to tune on")
    f = np.asarray([float(b.get("f_info", 0)) for b, _ in rows])
    a = np.asarray([float(b.get("anchor", 0)) for b, _ in rows])
    s = np.asarray([float(b.get("struct", 0)) for b, _ in rows])
    y = np.asarray([bool(lab) for _, lab in rows])
    forced = np.asarray([bool(b.get("from_seed")) for b, _ in rows])
    n_pos = max(1, int(y.sum()))
    grid = np.round(np.arange(0, 1 + 1e-9, step), 6)
    out = []
    for al, be in itertools.product(grid, grid):
        la = round(1 - al - be, 6)
        if la < -1e-9:
            continue
        la = max(0.0, la)
        p = al * f + be * a + la * s
        for th in thresholds:
            follow = (p > th) | forced
            k = int(follow.sum())
            if k == 0:
                continue
            tp = int((follow & y).sum())
            rec = tp / n_pos
            if rec + 1e-12 >= min_recall:
                out.append(TuneRow(float(al), float(be), float(la), float(th), k, tp / k, rec))
    out.sort(key=lambda r: (-r.harvest, -r.recall, r.threshold))
    return out


# -- page relevance as a classifier ([page] description_weight) ------------------------------


def precision_recall_f1(
    predicted: Iterable[bool], labels: Iterable[bool]
) -> tuple[float, float, float]:
    """Precision, recall and F1 of binary predictions against labels (0.0 where undefined)."""
    tp = fp = fn = 0
    for hit, y in zip(predicted, labels, strict=True):
        tp += hit and y
        fp += hit and not y
        fn += (not hit) and y
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, 2 * p * r / (p + r) if p + r else 0.0


def precision_at_recall(scores: Sequence[float], labels: Sequence[bool], recall: float) -> float:
    """Precision of the highest-scored items that reach ``recall`` of the positives."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    y = np.asarray(labels, dtype=bool)[order]
    need = recall * y.sum()
    if need <= 0:
        return float("nan")
    tp = np.cumsum(y)
    k = int(np.argmax(tp >= need))
    return float(tp[k] / (k + 1))


@dataclass
class PageRow:
    """One row of :func:`description_weight_table`."""

    weight: float
    auc: float
    p_at_recall: float


def description_weight_table(
    r_info: Sequence[float],
    r_text: Sequence[float],
    labels: Sequence[bool],
    *,
    weights: Sequence[float] = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    recall: float = 0.85,
) -> list[PageRow]:
    """ROC AUC and precision at ``recall`` of w·Rel(f_info) + (1 − w)·Rel(text) for each w
    (relevance of each page's description and main text, computed once)."""
    a, b = np.asarray(r_info, dtype=float), np.asarray(r_text, dtype=float)
    rows = []
    for w in weights:
        s = w * a + (1 - w) * b
        rows.append(PageRow(w, roc_auc(s, labels), precision_at_recall(s, labels, recall)))
    return rows


def article_texts(
    web: Path, category: str, strip: list[str] | tuple[str, ...] = ()
) -> tuple[list[str], list[str], list[bool]]:
    """The article pages of a local test web as (description texts, main texts, is
    ``category``), with each word of ``strip`` deleted from every page first."""
    from relevance.linkscore import PageInfo
    from relevance.priority import SemanticLinkScorer
    from sitegen.build import article_bodies
    from topicrawl.extract import decode_html, extract_page

    truth = json.loads((web / "ground_truth.json").read_text(encoding="utf-8"))
    infos, texts, labels = [], [], []
    for url, page, body, header in article_bodies(web, truth):
        html, _ = decode_html(body, header)
        ex = extract_page(html, url)
        info = SemanticLinkScorer.description_text(
            PageInfo(url, ex.title, ex.description, ex.keywords, ex.text)
        )
        text = ex.text or ""
        for word in strip:
            info, text = info.replace(word, ""), text.replace(word, "")
        infos.append(info)
        texts.append(text)
        labels.append(page["category"] == category)
    return infos, texts, labels


def _pages_main(argv: Sequence[str] | None = None) -> int:
    """``python -m relevance.evaluate pages WEB_DIR --topic FILE [--category C] [--drop W]
    [--strip W] [--set KEY=VALUE]``: the description-weight table over every article page of
    a local test web."""
    import argparse
    import json as _json

    from relevance.priority import SemanticLinkScorer
    from relevance.topic import load_topic

    ap = argparse.ArgumentParser(prog="python -m relevance.evaluate pages")
    ap.add_argument("web", type=Path, help="a local test web (python -m sitegen build)")
    ap.add_argument("--topic", required=True, action="append", help="topic file(s)")
    ap.add_argument("--category", default="时政")
    ap.add_argument("--drop", action="append", default=[], help="topic word to leave out")
    ap.add_argument("--strip", action="append", default=[], metavar="WORD",
                    help="delete WORD from every page first (e.g. the section name)")  # fmt: skip
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a topic value, e.g. similarity.th2=0.95")  # fmt: skip
    args = ap.parse_args(argv)
    infos, texts, labels = article_texts(args.web, args.category, args.strip)
    stripped = f" ({', '.join(args.strip)} deleted from every page)" if args.strip else ""
    print(f"{len(labels)} article pages, {sum(labels)} {args.category}{stripped}")
    for path in args.topic:
        for drop in [None, *args.drop]:
            topic = load_topic(path)
            for kv in args.set:
                key, value = kv.split("=", 1)
                table, attr = key.split(".")
                parsed: object = _json.loads(value) if value[:1] in "[0123456789tf" else value
                setattr(getattr(topic, table), attr, parsed)
            if drop:
                topic.words.pop(drop, None)
                topic.overrides.pop(drop, None)
            # the relevance the crawl uses: formula 3, mixed with a [classifier] if any
            scorer = SemanticLinkScorer.from_topic(topic)
            r_info = scorer.relevance_texts(infos)[0]
            r_text = scorer.relevance_texts(texts)[0]
            name = f"{Path(path).name}{' ' + ' '.join(args.set) if args.set else ''}"
            print(f"\n{name}{f' without {drop}' if drop else ''}")
            print("  description_weight  ROC AUC  precision at recall 0.85")
            for row in description_weight_table(r_info, r_text, labels):
                print(f"  {row.weight:18.1f}  {row.auc:7.3f}  {row.p_at_recall:.3f}")
    return 0


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] != ["pages"]:
        sys.exit("usage: python -m relevance.evaluate pages WEB_DIR --topic FILE ...")
    sys.exit(_pages_main(sys.argv[2:]))
