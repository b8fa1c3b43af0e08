"""Evaluation of the dedup methods on labelled pairs, and the antecedent learner.

Pairs file: JSON lines ``{"a": PATH, "b": PATH, "label": 0|1}`` with paths relative to the
file; ``.html``/``.htm`` files go through the crawl's extraction
(:func:`topicrawl.extract.extract_page`: trafilatura main text, title and meta description
via lxml), ``.txt`` files are used as text. ``label`` 1 means near-duplicate.

Each pair is judged on its own: a fresh in-memory index receives ``a`` and is queried with
``b`` (for the cascade: ``check_and_add(a)`` then ``check_and_add(b)``).

:func:`learn_antecedents` implements the antecedent selection of Li, Xu, Wu & Gan (2017):
for each stopword, t1 = occurrences in the main-text layer (trafilatura) and t2 =
occurrences in the whole page text; stopwords concentrated in the main text
(t1/t2 > 0.6) and frequent are the basic antecedents, those with t1/t2 > 0.9 the optimized
ones.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dedup.base import MODULES, REGISTRY, Detector, Doc, detector_class, make_detector
from dedup.cascade import DEFAULT_METHODS, Cascade
from dedup.storage import MemoryStorage
from dedup.text import stopwords, tokenize
from topicrawl.errors import ConfigError, ResourceMissingError, TopicrawlError


@dataclass(frozen=True)
class Pair:
    a: Path
    b: Path
    label: int


@dataclass
class Scores:
    """Confusion counts and the derived precision, recall and F1 of one method."""

    name: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, predicted: bool, label: int) -> None:
        if predicted and label:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif label:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.name,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "seconds": round(self.seconds, 3),
        }


def load_pairs(path: str | Path) -> list[Pair]:
    """Read a pairs file; paths are resolved relative to its directory."""
    path = Path(path)
    if not path.is_file():
        raise ResourceMissingError(f"pairs file {path} not found")
    pairs = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            a, b, label = row["a"], row["b"], int(row["label"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f'{path}:{n}: expected {{"a": PATH, "b": PATH, "label": 0|1}} ({exc})'
            ) from exc
        if label not in (0, 1):
            raise ConfigError(f"{path}:{n}: label must be 0 or 1, not {label}")
        pairs.append(Pair(path.parent / a, path.parent / b, label))
    return pairs


def load_document(path: str | Path) -> Doc:
    """A page as a :class:`Doc`: ``.html`` through the crawl's extraction, ``.txt`` as text."""
    path = Path(path)
    if not path.is_file():
        raise ResourceMissingError(f"document {path} not found")
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm", ".xhtml"):
        from topicrawl.extract import decode_html, extract_page

        html, _ = decode_html(path.read_bytes())
        ex = extract_page(html)
        return Doc(
            text=ex.text,
            title=ex.title,
            description=ex.description,
            url=path.resolve().as_uri(),
            published=ex.published,
            lang=ex.language if ex.language in ("zh", "en") else _guess_lang(ex.text),
        )
    if suffix == ".txt":
        text = path.read_text("utf-8")
        return Doc(text=text, url=path.resolve().as_uri(), lang=_guess_lang(text))
    raise ConfigError(f"{path}: only .html and .txt documents can be evaluated")


def _guess_lang(text: str) -> str:
    from topicrawl.extract import detect_language

    lang = detect_language(text)
    return lang if lang in ("zh", "en") else "zh"


class DocCache:
    """Loads each document once."""

    def __init__(self, loader: Callable[[Path], Doc] = load_document):
        self.loader = loader
        self.docs: dict[Path, Doc] = {}

    def __call__(self, path: Path) -> Doc:
        doc = self.docs.get(path)
        if doc is None:
            doc = self.docs[path] = self.loader(path)
        return doc


def available_methods(names: Iterable[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The importable methods among ``names`` (default: every known one) and why the others
    are not available."""
    names = list(names) if names is not None else list(dict.fromkeys([*MODULES, *REGISTRY]))
    ok, missing = [], {}
    for name in names:
        if name.startswith("_"):
            continue
        try:
            detector_class(name)
            ok.append(name)
        except ConfigError as exc:
            missing[name] = str(exc)
    return ok, missing


def evaluate_detector(
    pairs: Sequence[Pair],
    factory: Callable[[], Detector],
    docs: Callable[[Path], Doc],
    name: str,
) -> Scores:
    """Judge every pair with a fresh detector: index ``a``, query ``b``."""
    scores = Scores(name)
    for pair in pairs:
        a, b = docs(pair.a), docs(pair.b)
        t0 = time.perf_counter()
        det = factory()
        det.add("a", a)
        predicted = any(m.doc_id == "a" for m in det.query(b))
        scores.seconds += time.perf_counter() - t0
        scores.add(predicted, pair.label)
    return scores


def evaluate_cascade(
    pairs: Sequence[Pair],
    methods: Sequence[Any],
    docs: Callable[[Path], Doc],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    name: str = "cascade",
) -> Scores:
    """Judge every pair with a fresh cascade: ``check_and_add(a)`` then ``(b)``."""
    scores = Scores(name)
    for pair in pairs:
        a, b = docs(pair.a), docs(pair.b)
        t0 = time.perf_counter()
        c = Cascade(MemoryStorage(), methods, options=options)
        c.check_and_add("a", a)
        predicted = c.check_and_add("b", b).duplicate is not None
        scores.seconds += time.perf_counter() - t0
        scores.add(predicted, pair.label)
    return scores


def evaluate(
    pairs: Sequence[Pair],
    methods: Sequence[str] | None = None,
    *,
    cascade: Sequence[Any] | None = DEFAULT_METHODS,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    docs: Callable[[Path], Doc] | None = None,
) -> tuple[list[Scores], dict[str, str]]:
    """Scores of each method (default: every available one) and of the cascade.

    Returns ``(scores, skipped)`` where ``skipped`` maps unavailable methods to the reason.
    """
    options = dict(options or {})
    docs = docs or DocCache()
    names, skipped = available_methods(methods)
    results = []
    for name in names:
        params = dict(options.get(name, {}))
        results.append(
            evaluate_detector(
                pairs, lambda n=name, p=params: make_detector(n, MemoryStorage(), **p), docs, name
            )
        )
    if cascade:
        chain = [m for m in cascade if isinstance(m, Mapping) or m not in skipped]
        dropped = [m for m in cascade if not isinstance(m, Mapping) and m in skipped]
        label = "cascade(" + ",".join(m if isinstance(m, str) else m["name"] for m in chain) + ")"
        if dropped:
            skipped["cascade"] = f"run without unavailable {', '.join(dropped)}"
        if chain:
            opts = {k: v for k, v in options.items() if k in chain}
            results.append(evaluate_cascade(pairs, chain, docs, opts, name=label))
    return results, skipped


def format_table(scores: Sequence[Scores]) -> str:
    """A plain-text table of the scores."""
    head = f"{'method':<40} {'P':>6} {'R':>6} {'F1':>6} {'TP':>5} {'FP':>5} {'FN':>5} {'TN':>5} {'s':>7}"
    lines = [head, "-" * len(head)]
    for s in scores:
        lines.append(
            f"{s.name:<40} {s.precision:6.3f} {s.recall:6.3f} {s.f1:6.3f} "
            f"{s.tp:5d} {s.fp:5d} {s.fn:5d} {s.tn:5d} {s.seconds:7.2f}"
        )
    return "\n".join(lines)


# -- antecedent learning ---------------------------------------------------------------------


@dataclass
class AntecedentStats:
    """Per-stopword counts: t1 in main texts, t2 in whole pages, and the totals."""

    t1: Counter = field(default_factory=Counter)
    t2: Counter = field(default_factory=Counter)
    main_tokens: int = 0
    page_tokens: int = 0
    pages: int = 0

    def observe(self, main_text: str, page_text: str, lang: str = "zh") -> None:
        stop = stopwords(lang)
        main = [t for t in tokenize(main_text, lang)]
        page = [t for t in tokenize(page_text, lang)]
        self.t1.update(t for t in main if t in stop)
        self.t2.update(t for t in page if t in stop)
        self.main_tokens += len(main)
        self.page_tokens += len(page)
        self.pages += 1

    def ratio(self, word: str) -> float:
        return self.t1[word] / self.t2[word] if self.t2[word] else 0.0


def select_antecedents(
    stats: AntecedentStats,
    *,
    basic_ratio: float = 0.6,
    optimized_ratio: float = 0.9,
    basic_rate: float = 0.004,
    min_count: int = 20,
) -> tuple[list[str], list[str]]:
    """The paper's selection: basic = t1/t2 > ``basic_ratio`` and frequent (at least
    ``basic_rate`` of the main-text tokens); optimized = t1/t2 > ``optimized_ratio`` and
    seen at least ``min_count`` times in main texts (the rest are noise). Both lists are
    ordered by main-text frequency; ``optimized`` excludes the basic ones."""
    if not stats.main_tokens:
        raise TopicrawlError("no main text found in the pages: cannot learn antecedents")
    by_freq = sorted(stats.t1, key=lambda w: (-stats.t1[w], w))
    basic = [
        w
        for w in by_freq
        if stats.ratio(w) > basic_ratio and stats.t1[w] / stats.main_tokens >= basic_rate
    ]
    optimized = [
        w
        for w in by_freq
        if w not in basic and stats.ratio(w) > optimized_ratio and stats.t1[w] >= min_count
    ]
    return basic, optimized


def page_layers(html: str) -> tuple[str, str, str]:
    """``(main text, whole-page visible text, language)`` of one HTML page."""
    from dedup.pipeline import visible_text
    from topicrawl.extract import extract_page

    ex = extract_page(html)
    lang = ex.language if ex.language in ("zh", "en") else _guess_lang(ex.text)
    return ex.text, visible_text(html), lang


def learn_antecedents(
    pages: Iterable[str], *, lang: str = "zh", **selection: Any
) -> tuple[list[str], list[str], AntecedentStats]:
    """Learn ``(basic, optimized, stats)`` from HTML pages of language ``lang``."""
    stats = AntecedentStats()
    for html in pages:
        main, whole, page_lang = page_layers(html)
        if not main.strip() or (page_lang == "en") != (lang == "en"):
            continue
        stats.observe(main, whole, lang)
    basic, optimized = select_antecedents(stats, **selection)
    return basic, optimized, stats
