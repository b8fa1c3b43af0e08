"""A page classifier trained on labelled examples, next to formula 3.

Formula 3 (Zhou, Wang & Yu 2019) judges a text by the HowNet / word2vec similarity of its
words to a few dozen topic words. Names, events and the vocabulary of a news beat (胡锦涛,
会见, 国台办 …) have no such similarity to the topic words, so on its own formula 3 separates
the articles of a category only roughly. Learned focused crawlers (ACHE's page classifier,
Chakrabarti et al. 1999) instead train a text classifier on example pages of the topic and
of other topics. topicrawl does both: a topic file may name a labelled example set, and the
relevance of a text becomes

    rel(x) = (1 − w)·Rel_formula3(x) + w·P(topic | x)

with P a logistic regression over TF-IDF (sublinear tf) of the same candidate words formula 3
reads (scikit-learn), trained when the topic is loaded (10,000 headlines take about two
seconds; nothing is pickled or downloaded). A text with no word known to the classifier gets
formula 3 alone: the classifier abstains rather than guess from its prior.

Example files are UTF-8 text, one example a line, ``label<TAB>text`` or ``text<TAB>label``;
labels may be class ids resolved through a class-name file (line i names class i), as in the
THUCNews headline set of the shared data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from relevance.learning.base import sigmoid
from topicrawl.errors import ResourceMissingError

FORMATS = ("label-text", "text-label")


def _identity(words: Sequence[str]) -> Sequence[str]:
    return words


@dataclass(frozen=True)
class Examples:
    """Labelled example texts: ``texts[i]`` is on-topic when ``positive[i]``."""

    texts: list[str]
    labels: list[str]
    positive: np.ndarray


def read_examples(
    path: str | Path,
    *,
    positive: Sequence[str],
    fmt: str = "label-text",
    classes: str | Path | None = None,
) -> Examples:
    """Read a labelled example file; ``positive`` are the on-topic labels (names).

    Raises ResourceMissingError when a file is missing, a line is malformed or no example
    carries a positive label (naming the labels that exist).
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    path = Path(path)
    names: list[str] | None = None
    if classes is not None:
        try:
            names = [ln.strip() for ln in Path(classes).read_text(encoding="utf-8").splitlines()]
        except OSError as exc:
            raise ResourceMissingError(f"class-name file {classes}: {exc}") from None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ResourceMissingError(f"example file {path}: {exc}") from None
    texts: list[str] = []
    labels: list[str] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split("\t", 1) if fmt == "label-text" else line.rsplit("\t", 1)
        if len(parts) != 2:
            raise ResourceMissingError(f"{path}:{no}: expected {fmt.replace('-', '<TAB>')}")
        label, text = (parts[0], parts[1]) if fmt == "label-text" else (parts[1], parts[0])
        label = label.strip()
        if names is not None:
            if not label.isdigit() or int(label) >= len(names):
                raise ResourceMissingError(
                    f"{path}:{no}: label {label!r} is not a class id of {classes}"
                )
            label = names[int(label)]
        texts.append(text)
        labels.append(label)
    wanted = set(positive)
    pos = np.asarray([lb in wanted for lb in labels], dtype=bool)
    found = sorted(set(labels))
    missing = wanted - set(found)
    if missing or not pos.any():
        raise ResourceMissingError(
            f"{path}: no example has the label(s) {', '.join(sorted(missing or wanted))}; "
            f"labels found: {', '.join(found[:30])}"
        )
    if pos.all():
        raise ResourceMissingError(f"{path}: every example is positive; a classifier needs both")
    return Examples(texts, labels, pos)


def count_probabilities(
    terms: Mapping[str, tuple[float, float]],
    intercept: float,
    counts: Iterable[Iterable[tuple[str, int]]],
) -> list[float | None]:
    """P(topic | words) of each document given as (word, count) pairs (a word once) from a
    fitted TF-IDF + logistic regression model's word -> (idf, coefficient) table:
    tf' = 1 + ln tf, x = tf'·idf / ‖tf'·idf‖₂, P = σ(b + w·x) (scikit-learn's
    ``sublinear_tf`` TF-IDF arithmetic). None where no word of a document is in the table."""
    out: list[float | None] = []
    for pairs in counts:
        dot = norm = 0.0
        for w, c in pairs:
            t = terms.get(w)
            if t is not None:
                v = (1.0 + math.log(c)) * t[0]
                dot += v * t[1]
                norm += v * v
        out.append(sigmoid(intercept + dot / math.sqrt(norm)) if norm > 0 else None)
    return out


def term_probabilities(
    terms: Mapping[str, tuple[float, float]], intercept: float, docs: Sequence[Sequence[str]]
) -> list[float | None]:
    """:func:`count_probabilities` of word lists (the known words counted, in order of first
    occurrence)."""

    def known(doc: Sequence[str]) -> Iterable[tuple[str, int]]:
        counts: dict[str, int] = {}
        for w in doc:
            if w in terms:
                counts[w] = counts.get(w, 0) + 1
        return counts.items()

    return count_probabilities(terms, intercept, map(known, docs))


class TopicClassifier:
    """P(topic | text): logistic regression over TF-IDF of candidate words (scikit-learn).

    ``tokenize`` turns a text into its words (the topic's candidate extractor, so the
    classifier and formula 3 read the same words and a page is segmented once).
    """

    def __init__(
        self,
        vectorizer,
        model,
        tokenize: Callable[[str], list[str]],
        *,
        examples: int = 0,
        positives: int = 0,
    ):
        self.vectorizer = vectorizer
        self.model = model
        self.tokenize = tokenize
        self.examples = examples  # training set size, for reports
        self.positives = positives
        # the fitted model as word -> (idf, coefficient), for the per-page hot path
        vocab = vectorizer.vocabulary_
        idf, coef = vectorizer.idf_, model.coef_.ravel()
        self._terms = {w: (float(idf[j]), float(coef[j])) for w, j in vocab.items()}
        self._intercept = float(model.intercept_[0])

    @classmethod
    def train(
        cls,
        examples: Examples,
        tokenize: Callable[[str], list[str]],
        *,
        c: float = 10.0,
    ) -> TopicClassifier:
        """Fit TF-IDF (sublinear tf, l2) and a logistic regression with inverse
        regularisation ``c`` on the examples (class prior kept: no re-weighting)."""
        from relevance.sklearnimport import import_sklearn, one_blas_thread

        import_sklearn()
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        words = [tokenize(t) for t in examples.texts]
        vec = TfidfVectorizer(analyzer=_identity, sublinear_tf=True)
        x = vec.fit_transform(words)
        model = LogisticRegression(C=c, max_iter=5000)
        with one_blas_thread():  # lbfgs's BLAS calls on 2 threads spin: 3-8 s CPU, not 0.3 s
            model.fit(x, examples.positive)
        n_pos = int(examples.positive.sum())
        return cls(vec, model, tokenize, examples=len(words), positives=n_pos)

    @classmethod
    def from_table(
        cls,
        table: Mapping,
        tokenize: Callable[[str], list[str]],
    ) -> TopicClassifier:
        """A classifier from :meth:`to_table` (the start-up cache, :func:`train_cached`):
        the same probabilities, without scikit-learn (:meth:`probability_sklearn` then
        raises)."""
        self = cls.__new__(cls)
        self.vectorizer = self.model = None
        self.tokenize = tokenize
        self.examples = int(table["examples"])
        self.positives = int(table["positives"])
        self._terms = {str(w): (float(v[0]), float(v[1])) for w, v in table["terms"].items()}
        self._intercept = float(table["intercept"])
        return self

    def to_table(self) -> dict:
        """The fitted model as JSON: word -> [idf, coefficient], intercept, example counts
        (floats round-trip exactly through JSON)."""
        return {
            "terms": {w: [i, c] for w, (i, c) in self._terms.items()},
            "intercept": self._intercept,
            "examples": self.examples,
            "positives": self.positives,
        }

    @property
    def vocabulary_size(self) -> int:
        return len(self._terms)

    def probability_words(self, docs: Sequence[Sequence[str]]) -> list[float | None]:
        """P(topic | words) of each word list; None where no word is in the vocabulary.

        The fitted model's own arithmetic — tf' = 1 + ln tf, x = tf'·idf / ‖tf'·idf‖₂,
        P = σ(b + w·x) — evaluated from a word -> (idf, w) table: the same values as
        ``model.predict_proba(vectorizer.transform(docs))`` (see :meth:`probability_sklearn`)
        without scikit-learn's per-call input validation, which costs more than the sums on
        the few dozen short texts of a page.
        """
        return term_probabilities(self._terms, self._intercept, docs)

    def probability_sklearn(self, docs: Sequence[Sequence[str]]) -> list[float | None]:
        """:meth:`probability_words` through scikit-learn's transform and predict_proba."""
        if not docs:
            return []
        if self.vectorizer is None:
            raise ValueError("this classifier was read from the start-up cache: no sklearn model")
        x = self.vectorizer.transform(docs)
        p = self.model.predict_proba(x)[:, 1]
        known = np.diff(x.indptr) > 0
        return [float(v) if k else None for v, k in zip(p, known, strict=True)]

    def probability(self, texts: Sequence[str]) -> list[float | None]:
        """P(topic | text) of each text; None where no word is in the vocabulary."""
        return self.probability_words([self.tokenize(t) for t in texts])


def mix(formula3: float, probability: float | None, weight: float) -> float:
    """rel = (1 − w)·formula 3 + w·P(topic | x); formula 3 alone when the classifier abstains."""
    if probability is None or weight <= 0.0:
        return formula3
    return (1.0 - weight) * formula3 + weight * probability


#: the modules whose code decides a trained classifier (part of the start-up cache key)
CLASSIFIER_CODE = ("relevance.classifier", "relevance.weights", "topicrawl.segment")


def train_cached(
    path: str | Path,
    tokenize: Callable[[str], list[str]],
    *,
    positive: Sequence[str],
    fmt: str = "label-text",
    classes: str | Path | None = None,
    c: float = 10.0,
) -> TopicClassifier:
    """:meth:`TopicClassifier.train` on an example file, through the start-up cache
    (:mod:`topicrawl.modelcache`): keyed by the files' SHA-256, the settings, the tokenizer's
    ``cache_key()`` and this code; trained (and written) only when the key is new. A
    tokenizer without ``cache_key`` is trained every time."""
    from topicrawl import modelcache

    def train() -> TopicClassifier:
        ex = read_examples(path, positive=positive, fmt=fmt, classes=classes)
        return TopicClassifier.train(ex, tokenize, c=c)

    describe = getattr(tokenize, "cache_key", None)
    if describe is None or not modelcache.enabled():
        return train()
    files = [path] + ([classes] if classes else [])
    try:
        key = modelcache.cache_key(
            "classifier",
            {"positive": sorted(positive), "format": fmt, "c": c, "tokenize": describe()},
            files=files, code=CLASSIFIER_CODE,
        )  # fmt: skip
    except OSError:  # a missing file: read_examples names it
        return train()
    table = modelcache.load("classifier", key)
    if table is not None:
        try:
            return TopicClassifier.from_table(table, tokenize)
        except (KeyError, TypeError, ValueError, AttributeError):
            modelcache.STATS["bad"] += 1
    modelcache.STATS["miss"] += 1
    clf = train()
    modelcache.store("classifier", key, clf.to_table())
    return clf
