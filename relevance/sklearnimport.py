"""scikit-learn for the topic classifier (:mod:`relevance.classifier`: a topic with examples),
imported once, optionally without pandas. (The page model of calibrated mode fits without it:
:mod:`relevance.learning.logistic`.)

scikit-learn imports pandas when it is installed (``sklearn.utils.fixes``), only to recognise
DataFrames; the learners here give it sparse matrices and arrays, never a DataFrame. In a
crawl process pandas would cost about 60 MB of resident memory and 0.3 s of CPU
(docs/scale.md), so ``scrapy crawl`` asks for it to be hidden (:func:`hide_pandas`): while
scikit-learn is imported, ``sys.modules["pandas"]`` is None — Python's documented way to make
an import raise ``ModuleNotFoundError`` — and scikit-learn takes pandas as not installed.
Afterwards pandas is importable again as usual; only scikit-learn keeps not knowing it.

The learners fit with one BLAS thread (:func:`one_blas_thread`).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

_lock = threading.Lock()
_hide_pandas = False


def hide_pandas(hide: bool = True) -> None:
    """Import scikit-learn without pandas in this process (a crawl process: nothing else in
    it imports pandas while scikit-learn's import runs)."""
    global _hide_pandas
    _hide_pandas = hide


def import_sklearn() -> None:
    """Import the scikit-learn modules the learners use (feature extraction and linear
    models), with pandas hidden when :func:`hide_pandas` asked for it. Threads wait for one
    another: a crawl starts the import in the background, and its first training may come
    while it runs."""
    with _lock:
        if "sklearn.linear_model" in sys.modules:
            return
        hidden = _hide_pandas and "pandas" not in sys.modules
        if hidden:
            sys.modules["pandas"] = None  # type: ignore[assignment]
        try:
            import sklearn.feature_extraction.text  # noqa: F401
            import sklearn.linear_model  # noqa: F401
        finally:
            if hidden and "pandas" in sys.modules and sys.modules["pandas"] is None:
                del sys.modules["pandas"]


def one_blas_thread() -> Any:
    """A context in which the BLAS libraries loaded in this process (NumPy's and SciPy's
    OpenBLAS) use one thread: threadpoolctl's ``threadpool_limits``, scikit-learn's own
    dependency. liblinear calls BLAS level-1 routines (dot products, norms) on vectors of
    the model's size, and OpenBLAS splits those over its threads from about 10,000 words
    on: the crawl's thread then spins waiting for the other core, 0.1–2.9 s of CPU a
    training instead of 0.04–0.10 s (docs/scale.md, 2026-11-27, session 34), while the
    extraction worker waits for that core. One thread also makes the model the same on
    any number of cores (the threaded sums differ in their last bits: ≈ 1e-13)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
