"""Training the shipped topic's classifier with the process's BLAS threads and with one.

``topics/shizheng.toml``'s ``[classifier]`` (10,000 THUCNews headlines: the TF-IDF matrix
of :meth:`relevance.classifier.TopicClassifier.train`, then its lbfgs logistic regression) is
fitted in one process, alternately with the process's BLAS threads (scikit-learn's default)
and inside :func:`relevance.sklearnimport.one_blas_thread` (what ``train`` does since
2026-11-27); wall and CPU time of each fit and the sum of the coefficients (the same model
up to the last bits). On a 2-core machine OpenBLAS
splits lbfgs's vector operations over both cores and spins.

    python bench/blas_threads.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # not bench/relevance.py

from relevance.classifier import _identity, read_examples  # noqa: E402
from relevance.sklearnimport import import_sklearn, one_blas_thread  # noqa: E402
from topicrawl.data import data_path  # noqa: E402
from topicrawl.segment import segment_zh  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import_sklearn()
    ex = read_examples(
        data_path("corpus/thucnews_titles_dev.txt"),
        positive=["politics"],
        fmt="text-label",
        classes=data_path("corpus/thucnews_titles_classes.txt"),
    )
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    words = [segment_zh(t) for t in ex.texts]
    x = TfidfVectorizer(analyzer=_identity, sublinear_tf=True).fit_transform(words)
    print("threads   wall s   CPU s   sum of coefficients")
    for _ in range(args.repeats):
        for label in ("default", "one"):
            model = LogisticRegression(C=10.0, max_iter=5000)
            t0, c0 = time.perf_counter(), time.process_time()
            if label == "one":
                with one_blas_thread():
                    model.fit(x, ex.positive)
            else:
                model.fit(x, ex.positive)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            print(f"{label:8} {wall:7.2f} {cpu:7.2f}   {model.coef_.sum():.12f}", flush=True)


if __name__ == "__main__":
    main()
