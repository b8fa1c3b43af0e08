"""Word-vector similarity through gensim ``KeyedVectors``, and training it on a corpus.

Zhou, Wang & Yu (2019) combine HowNet with word2vec (SimD) trained on a domain corpus; no
pretrained Chinese vectors ship with topicrawl, so :func:`train_vectors` trains them on the
shared corpora (People's Daily ``word/pos`` text, cnews ``label<TAB>text``) or on a crawl:
by default a fastText model (gensim ``FastText``: word2vec plus character n-grams), which
measured best on wordsim-297 and gives vectors to words the corpus never had.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from relevance.hownet import set_identity
from topicrawl.errors import ResourceMissingError
from topicrawl.segment import normalize, segment_zh

log = logging.getLogger(__name__)

_TAGGED = re.compile(r"^(\S+)/[A-Za-z]{1,4}$")
_SENT_SPLIT = re.compile(r"(?<=[。！？!?；;])")
_TOKEN_OK = re.compile(r"[\w\u4e00-\u9fff]")


class VectorSimilarity:
    """Cosine similarity of word vectors; ``similarity`` is clipped to [0, 1].

    word2vec vectors know their vocabulary only. fastText vectors (gensim
    ``FastTextKeyedVectors``) also give a vector to a word the corpus never had, summed from
    its character n-grams: such a word counts as known when at least one of its n-grams
    occurred in a training word (a word of unseen characters stays unknown, not noise).
    """

    name = "word2vec"

    def __init__(self, kv):  # gensim.models.KeyedVectors
        self.kv = kv
        self._unit = kv.get_normed_vectors().astype(np.float32)
        self.subword = bool(getattr(kv, "bucket", 0)) and hasattr(kv, "vectors_ngrams")
        self._oov: dict[str, np.ndarray | None] = {}
        if self.subword:
            from gensim.models.fasttext import ft_ngram_hashes

            seen = np.zeros(kv.bucket, dtype=bool)
            for w in kv.key_to_index:
                seen[ft_ngram_hashes(w, kv.min_n, kv.max_n, kv.bucket)] = True
            self._seen = seen

    @classmethod
    def from_path(cls, path: str | Path) -> VectorSimilarity:
        """Load word2vec text (``.txt``/``.vec``), binary (``.bin``) or gensim (other) files
        (a gensim-saved fastText model keeps its n-grams)."""
        from gensim.models import FastText, KeyedVectors, Word2Vec

        p = Path(path).expanduser()
        if not p.exists():
            raise ResourceMissingError(
                f"word vectors {p} not found: train them with "
                f"`topicrawl vectors train --corpus FILE... --out {p}` or fix [similarity] vectors"
            )
        suffix = p.suffix.lower()
        try:
            if suffix in (".txt", ".vec"):
                kv = KeyedVectors.load_word2vec_format(str(p), binary=False)
            elif suffix == ".bin":
                kv = KeyedVectors.load_word2vec_format(str(p), binary=True)
            else:
                obj = KeyedVectors.load(str(p))
                kv = obj.wv if isinstance(obj, (Word2Vec, FastText)) else obj
        except Exception as exc:
            raise ResourceMissingError(f"cannot load word vectors {p}: {exc}") from exc
        return cls(kv)

    def _oov_vector(self, word: str) -> np.ndarray | None:
        """Unit vector of an out-of-vocabulary word from its seen n-grams (fastText)."""
        if not self.subword:
            return None
        if word in self._oov:
            return self._oov[word]
        from gensim.models.fasttext import ft_ngram_hashes

        kv = self.kv
        h = ft_ngram_hashes(word, kv.min_n, kv.max_n, kv.bucket)
        v = None
        if h and self._seen[h].any():
            vec = kv.get_vector(word)
            norm = float(np.linalg.norm(vec))
            if norm > 0:
                v = (vec / norm).astype(np.float32)
        if len(self._oov) > 200_000:
            self._oov.clear()
        self._oov[word] = v
        return v

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        return word in self.kv.key_to_index or self._oov_vector(word) is not None

    def __len__(self) -> int:
        return len(self.kv.key_to_index)

    def cosine(self, a: str, b: str) -> float:
        """Raw cosine in [-1, 1] (0 when a word is unknown)."""
        if a == b:
            return 1.0
        if a not in self or b not in self:
            return 0.0
        return float(self.matrix([a], [b])[0, 0])

    def similarity(self, a: str, b: str) -> float:
        return max(0.0, self.cosine(a, b))

    def most_similar(self, word: str, topn: int = 10) -> list[tuple[str, float]]:
        if word not in self:
            return []
        if word in self.kv.key_to_index:
            found = self.kv.most_similar(word, topn=topn)
        else:
            found = self.kv.similar_by_vector(self._oov_vector(word), topn=topn)
        return [(w, max(0.0, float(s))) for w, s in found]

    def index(self, words: Sequence[str]) -> np.ndarray:
        """Vocabulary index of each word, -1 when not in the vocabulary."""
        k2i = self.kv.key_to_index
        return np.asarray([k2i.get(w, -1) for w in words], dtype=np.int64)

    def known(self, words: Sequence[str]) -> np.ndarray:
        """Boolean mask: which words have a vector (long lists are cached)."""
        cache = self.__dict__.setdefault("_known_cache", {})
        key = tuple(words) if len(words) >= 64 else None
        if key is not None and key in cache:
            return cache[key]
        out = self.index(words) >= 0
        if self.subword:
            for i in np.flatnonzero(~out):
                out[i] = self._oov_vector(words[i]) is not None
        if key is not None:
            if len(cache) > 8:
                cache.clear()
            cache[key] = out
        return out

    def _side(self, words: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``words`` (zero rows for unknown words); long lists are cached."""
        cache = self.__dict__.setdefault("_side_cache", {})
        key = tuple(words) if len(words) >= 64 else None
        if key is not None and key in cache:
            return cache[key]
        idx = self.index(words)
        v = self._unit[np.maximum(idx, 0)] * (idx >= 0)[:, None]
        if self.subword:
            for i in np.flatnonzero(idx < 0):
                o = self._oov_vector(words[i])
                if o is not None:
                    v[i] = o
        if key is not None:
            if len(cache) > 8:
                cache.clear()
            cache[key] = v
        return v

    def matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        """Raw cosine matrix (unknown words: 0; a word with itself: 1)."""
        out = small_matmul(self._side(words_a), self._side(words_b).T)
        set_identity(out, words_a, words_b)
        return out


# OpenBLAS runs a product single-threaded below m·n·k = 4·65536 (GEMM_MULTITHREAD_THRESHOLD);
# above it, it starts threads, which on a loaded 2-core machine made a 200x100 @ 100x500
# product 20-50x slower. The crawl's products are small, so they are cut into row blocks
# that stay under the threshold.
_BLAS_SINGLE_THREAD = 4 * 65536 - 1


def small_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in row blocks small enough for single-threaded BLAS (same result)."""
    m, k = a.shape
    n = b.shape[1]
    step = max(1, _BLAS_SINGLE_THREAD // max(1, n * k))
    if step >= m:
        return a @ b
    out = np.empty((m, n), dtype=np.result_type(a, b))
    for lo in range(0, m, step):
        np.matmul(a[lo : lo + step], b, out=out[lo : lo + step])
    return out


def _tokens_of_line(line: str) -> list[str]:
    """Tokens of one corpus line: pre-segmented ``word/pos`` text, or raw text segmented as
    page relevance segments it (:func:`topicrawl.segment.segment_zh`); NFKC forms both, so
    that the words looked up in a crawl (１９９８年 is read as 1998年) are the words trained."""
    parts = line.split()
    if parts and sum(bool(_TAGGED.match(p)) for p in parts) >= 0.8 * len(parts):
        toks = [normalize(m.group(1)) for p in parts if (m := _TAGGED.match(p))]
        return [t for t in toks if _TOKEN_OK.search(t)]
    return [t for t in segment_zh(line) if t.strip() and _TOKEN_OK.search(t)]


def iter_corpus_sentences(lines: Iterable[str]) -> Iterator[list[str]]:
    """Sentences of token lists from corpus lines.

    A line with a TAB keeps its last column (``label<TAB>text``); long lines are split into
    sentences at 。！？；.
    """
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if "\t" in line:
            line = line.rsplit("\t", 1)[1]
        for sent in _SENT_SPLIT.split(line) if len(line) > 200 else [line]:
            toks = _tokens_of_line(sent)
            if toks:
                yield toks


def _iter_files(paths: Sequence[str | Path]) -> Iterator[str]:
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise ResourceMissingError(f"corpus file {path} not found")
        with path.open(encoding="utf-8", errors="replace") as fh:
            yield from fh


# Defaults of `topicrawl vectors train`, chosen on the tune half of wordsim-297
# (docs/benchmarks/relevance.md, "Vectors"; bench/vectors.py reproduces the grid).
TRAIN_DEFAULTS: dict = {
    "model": "fasttext",
    "sg": 1,
    "vector_size": 100,
    "window": 5,
    "min_count": 3,
    "epochs": 20,
    "min_n": 1,
    "max_n": 3,
    "bucket": 200_000,
}


def write_segmented(lines: Iterable[str], path: str | Path, *, progress: bool = False) -> int:
    """Segment corpus lines (:func:`iter_corpus_sentences`) into ``path``, one sentence a
    line of space-separated tokens; returns the number of sentences."""
    from tqdm import tqdm

    n = 0
    with Path(path).open("w", encoding="utf-8") as fh:
        for toks in tqdm(
            iter_corpus_sentences(lines), desc="segmenting", unit=" sent", disable=not progress
        ):
            fh.write(" ".join(toks) + "\n")
            n += 1
    return n


def train_segmented(
    segmented: str | Path,
    *,
    model: str = TRAIN_DEFAULTS["model"],
    sg: int = TRAIN_DEFAULTS["sg"],
    vector_size: int = TRAIN_DEFAULTS["vector_size"],
    window: int = TRAIN_DEFAULTS["window"],
    min_count: int = TRAIN_DEFAULTS["min_count"],
    epochs: int = TRAIN_DEFAULTS["epochs"],
    min_n: int = TRAIN_DEFAULTS["min_n"],
    max_n: int = TRAIN_DEFAULTS["max_n"],
    bucket: int = TRAIN_DEFAULTS["bucket"],
    workers: int = 1,
    seed: int = 1,
    progress: bool = False,
):
    """Train gensim ``Word2Vec`` or ``FastText`` (``model``) on a segmented file.

    ``sg`` 1 = skip-gram, 0 = CBOW. fastText (Bojanowski et al. 2017) adds character
    n-grams of ``min_n``..``max_n`` characters (hashed into ``bucket`` rows), so a word the
    corpus never had still gets a vector from its characters. Returns the ``KeyedVectors``.
    """
    from gensim.models import FastText, Word2Vec
    from gensim.models.callbacks import CallbackAny2Vec
    from gensim.models.word2vec import LineSentence
    from tqdm import tqdm

    common = dict(
        vector_size=vector_size,
        window=window,
        min_count=min_count,
        workers=workers,
        sg=sg,
        seed=seed,
    )
    if model == "word2vec":
        m = Word2Vec(**common)
    elif model == "fasttext":
        m = FastText(**common, min_n=min_n, max_n=max_n, bucket=bucket)
    else:
        raise ValueError(f"unknown vector model {model!r} (word2vec or fasttext)")
    m.build_vocab(LineSentence(str(segmented)))
    bar = tqdm(total=epochs, desc="training", unit=" epoch", disable=not progress)

    class _EpochBar(CallbackAny2Vec):
        def on_epoch_end(self, model) -> None:
            bar.update(1)

    m.train(
        LineSentence(str(segmented)),
        total_examples=m.corpus_count,
        epochs=epochs,
        callbacks=[_EpochBar()],
    )
    bar.close()
    return m.wv


def train_vectors(
    corpus_paths: Sequence[str | Path] = (),
    out: str | Path | None = None,
    *,
    texts: Iterable[str] | None = None,
    workers: int = 1,
    seed: int = 1,
    progress: bool = True,
    **params,
):
    """Train vectors on corpus files and/or texts; save to ``out`` if given.

    ``params``: those of :func:`train_segmented` (defaults :data:`TRAIN_DEFAULTS`). Files
    are segmented once (``word/pos`` lines are taken as segmented) into a temporary file,
    then gensim trains on it. With one worker (the default) the same corpus and seed give
    the same vectors in any process; more workers train faster, but gensim's threads then
    see the sentences in an order that varies from run to run. The output format follows
    ``out``'s suffix: ``.txt``/``.vec`` word2vec text, ``.bin`` word2vec binary, anything
    else gensim ``KeyedVectors.save`` (the only one that keeps fastText's n-grams). Returns
    the ``KeyedVectors``.
    """

    def lines() -> Iterator[str]:
        if corpus_paths:
            yield from _iter_files(corpus_paths)
        if texts is not None:
            for t in texts:
                yield from t.splitlines()

    with tempfile.TemporaryDirectory(prefix="topicrawl-w2v-") as tmp:
        seg = Path(tmp) / "segmented.txt"
        if write_segmented(lines(), seg, progress=progress) == 0:
            raise ResourceMissingError("the corpus is empty: nothing to train word vectors on")
        kv = train_segmented(seg, workers=workers, seed=seed, progress=progress, **params)
    if out is not None:
        save_vectors(kv, out)
    return kv


def save_vectors(kv, out: str | Path) -> Path:
    """Save ``KeyedVectors`` in the format named by ``out``'s suffix."""
    p = Path(out).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    suffix = p.suffix.lower()
    if suffix in (".txt", ".vec"):
        kv.save_word2vec_format(str(p), binary=False)
    elif suffix == ".bin":
        kv.save_word2vec_format(str(p), binary=True)
    else:
        kv.save(str(p))
    return p
