"""The compiled dedup feature pass (``dedup/_features.pyx``, built by ``pip install -e .``):
a page's letters, shingle hashes, samples, span keys and SpotSigs' letter sketch, computed
as their numpy references in :mod:`dedup.containment` and :mod:`dedup.spotsigs` define
them (issue 13, item 5; ``tests/test_features_compiled.py``).

There is no fallback: without the built module, importing the dedup methods fails and says
how to build it (a silent fallback would halve the cascade's throughput unnoticed)."""

from __future__ import annotations

try:
    from dedup import _features as features
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "topicrawl's compiled dedup module dedup._features is not built: run "
        "`pip install -e .` in the source tree (or `python setup.py build_ext --inplace`; "
        "needs a C compiler, the Python headers and Cython)"
    ) from exc

__all__ = ["features"]
