"""relevance.learning.logistic against scikit-learn: the page model's TF-IDF and liblinear's
L2-regularised logistic regression without importing scikit-learn (issue 16)."""

import numpy as np
import pytest
import scipy.sparse as sp

from relevance.learning.logistic import balanced_weights, fit_logistic, probabilities, tfidf


def _problem(seed: int, n: int, m: int):
    """Sparse word counts with a signal: the positives share a few words."""
    rng = np.random.default_rng(seed)
    counts = sp.random(n, m, density=min(1.0, 40 / m), format="lil", random_state=seed,
                       data_rvs=lambda k: rng.integers(1, 6, k)).astype(float)  # fmt: skip
    y = (rng.random(n) < rng.uniform(0.15, 0.6)).astype(int)
    signal = rng.integers(0, m, 20)
    for i in np.flatnonzero(y):
        counts[i, rng.choice(signal)] = 3.0
    counts[0, :] = 0.0  # an empty page
    counts = counts.tocsr()
    counts.eliminate_zeros()
    counts.sort_indices()
    return counts, y, rng.uniform(0.01, 2.0, n)


@pytest.mark.parametrize("seed,n,m", [(0, 40, 300), (1, 400, 3000), (2, 1500, 12000)])
def test_tfidf_is_scikit_learns(seed, n, m):
    from sklearn.feature_extraction.text import TfidfTransformer

    counts, _, _ = _problem(seed, n, m)
    ref = TfidfTransformer(sublinear_tf=True)
    x_ref = ref.fit_transform(counts)
    idf, x = tfidf(counts)
    assert np.allclose(idf, ref.idf_, rtol=0, atol=1e-12)
    assert x.shape == x_ref.shape and abs(x - x_ref).max() < 1e-12
    assert counts.data.max() > 1  # the input is left as it was


@pytest.mark.parametrize("class_weight", ["balanced", None])
@pytest.mark.parametrize("seed,n,m", [(0, 40, 300), (1, 400, 3000), (2, 1500, 12000),
                                      (3, 1200, 900)])  # fmt: skip
def test_fit_logistic_is_liblinears(seed, n, m, class_weight):
    """The coefficients and probabilities of ``LogisticRegression(solver="liblinear")``, with
    sample weights, as the page model fits it (C = 10, TF-IDF rows): the same trust-region
    iterates, so equal up to the order of floating-point sums."""
    from sklearn.linear_model import LogisticRegression

    counts, y, w = _problem(seed, n, m)
    _, x = tfidf(counts)
    ref = LogisticRegression(C=10.0, max_iter=2000, class_weight=class_weight,
                             solver="liblinear").fit(x, y, sample_weight=w)  # fmt: skip
    coef, b = fit_logistic(x, y, c=10.0, sample_weight=w, class_weight=class_weight,
                           max_iter=2000)  # fmt: skip
    assert np.abs(coef - ref.coef_.ravel()).max() < 1e-7
    assert b == pytest.approx(ref.intercept_[0], abs=1e-7)
    p = probabilities(x, coef, b)
    assert np.abs(p - ref.predict_proba(x)[:, 1]).max() < 1e-8
    # a loose tolerance stops earlier, at another iterate: the comparison can tell
    rough, _ = fit_logistic(x, y, c=10.0, sample_weight=w, class_weight=class_weight, tol=0.5)
    assert np.abs(rough - ref.coef_.ravel()).max() > 1e-6


def test_balanced_weights_and_one_class():
    from sklearn.utils.class_weight import compute_class_weight

    y, w = np.array([0, 1, 1, 1, 0, 1]), np.array([0.5, 1.0, 2.0, 1.0, 1.0, 0.1])
    ref = compute_class_weight("balanced", classes=np.array([0, 1]), y=y, sample_weight=w)
    assert np.allclose(balanced_weights(y, w), ref)
    with pytest.raises(ValueError, match="both classes"):
        fit_logistic(sp.csr_matrix(np.eye(3)), np.ones(3, dtype=int))
