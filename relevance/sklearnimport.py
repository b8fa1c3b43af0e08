"""scikit-learn for the learners, imported once, optionally without pandas.

scikit-learn imports pandas when it is installed (``sklearn.utils.fixes``), only to recognise
DataFrames; the learners here give it sparse matrices and arrays, never a DataFrame. In a
crawl process pandas would cost about 60 MB of resident memory and 0.3 s of CPU
(docs/scale.md), so ``scrapy crawl`` asks for it to be hidden (:func:`hide_pandas`): while
scikit-learn is imported, ``sys.modules["pandas"]`` is None — Python's documented way to make
an import raise ``ModuleNotFoundError`` — and scikit-learn takes pandas as not installed.
Afterwards pandas is importable again as usual; only scikit-learn keeps not knowing it.
"""

from __future__ import annotations

import sys
import threading

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
