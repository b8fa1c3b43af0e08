"""relevance.learning.logistic against scikit-learn: the page model's TF-IDF and liblinear's
L2-regularised logistic regression (fitted by SciPy's optimizer) without importing
scikit-learn (issue 16)."""

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
def test_fit_logistic_is_liblinears_objective(seed, n, m, class_weight):
    """The minimum of ``LogisticRegression(solver="liblinear")``'s objective, with sample
    weights, as the page model fits it (C = 10, TF-IDF rows): liblinear run to convergence
    (tol 1e-10) and SciPy's optimizer give the same probabilities (≤ 1e-4) and decisions; the
    objective with another C, or without the class or sample weights, would not."""
    from sklearn.linear_model import LogisticRegression

    counts, y, w = _problem(seed, n, m)
    _, x = tfidf(counts)
    ref = LogisticRegression(C=10.0, max_iter=5000, tol=1e-10, class_weight=class_weight,
                             solver="liblinear").fit(x, y, sample_weight=w)  # fmt: skip
    q = ref.predict_proba(x)[:, 1]
    coef, b = fit_logistic(x, y, c=10.0, sample_weight=w, class_weight=class_weight,
                           max_iter=2000)  # fmt: skip
    p = probabilities(x, coef, b)
    assert np.abs(p - q).max() < 1e-4
    assert ((p >= 0.5) == (q >= 0.5)).all()
    # the comparison can tell a wrong objective: each of these moves a probability by > 1e-3
    other = "balanced" if class_weight is None else None
    wrong = [fit_logistic(x, y, c=5.0, sample_weight=w, class_weight=class_weight),
             fit_logistic(x, y, c=10.0, sample_weight=w, class_weight=other),
             fit_logistic(x, y, c=10.0, class_weight=class_weight)]  # fmt: skip
    assert all(np.abs(probabilities(x, *fit) - q).max() > 1e-3 for fit in wrong)


def test_balanced_weights_and_one_class():
    from sklearn.utils.class_weight import compute_class_weight

    y, w = np.array([0, 1, 1, 1, 0, 1]), np.array([0.5, 1.0, 2.0, 1.0, 1.0, 0.1])
    ref = compute_class_weight("balanced", classes=np.array([0, 1]), y=y, sample_weight=w)
    assert np.allclose(balanced_weights(y, w), ref)
    with pytest.raises(ValueError, match="both classes"):
        fit_logistic(sp.csr_matrix(np.eye(3)), np.ones(3, dtype=int))
