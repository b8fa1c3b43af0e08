"""TF-IDF and L2-regularised logistic regression on sparse counts, with NumPy, SciPy's sparse
matrices and SciPy's optimizer: what the self-training page model fitted with scikit-learn's
``TfidfTransformer(sublinear_tf=True)`` and ``LogisticRegression(solver="liblinear")``, without
importing scikit-learn in a crawl process (its import costs ≈ 70 MB of resident memory there,
most of it SciPy's statistics, which its utilities import; docs/scale.md, issue 16).

:func:`fit_logistic` minimises liblinear's objective of L2-regularised logistic regression
(``L2R_LR``; Fan et al., "LIBLINEAR: A Library for Large Linear Classification", JMLR 9, 2008,
eq. 2; the bias a feature of value 1, regularised too; per-sample costs Cᵢ for the class and
sample weights) with ``scipy.optimize.minimize(method="trust-ncg")``, a trust-region Newton
method with conjugate gradient (Nocedal & Wright, Numerical Optimization, 2nd ed., Algorithm
7.2), the kind liblinear's own solver is (Lin, Weng & Keerthi, JMLR 9, 2008). Written here are
only the objective, its gradient and its Hessian-vector product. It stops at another iterate
than liblinear: ``tests/test_logistic.py`` holds the probabilities within 1e-4 of liblinear's
converged ones; on a real crawl's 44 fits they were within 5.7e-5 of scikit-learn's, no
decision at 0.5 flipped (docs/scale.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def tfidf(counts: Any) -> tuple[np.ndarray, Any]:
    """scikit-learn's ``TfidfTransformer(sublinear_tf=True).fit_transform`` of a CSR matrix of
    counts (no explicit zeros): tf' = 1 + ln tf, idf = ln((1 + n) / (1 + df)) + 1, each row
    l2-normalised. Returns (idf, the TF-IDF matrix, CSR float64)."""
    x = counts.astype(np.float64, copy=True)
    np.log(x.data, out=x.data)
    x.data += 1.0
    df = np.bincount(x.indices, minlength=x.shape[1])
    idf = np.log((x.shape[0] + 1) / (df + 1)) + 1.0
    x.data *= idf[x.indices]
    rows = np.repeat(np.arange(x.shape[0]), np.diff(x.indptr))
    norms = np.sqrt(np.bincount(rows, weights=x.data * x.data, minlength=x.shape[0]))
    norms[norms == 0.0] = 1.0
    x.data /= norms[rows]
    return idf, x


def balanced_weights(y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
    """scikit-learn's ``compute_class_weight("balanced", …)`` with sample weights, for labels
    0/1: class k weighs Σw / (2·Σ_{y=k} w)."""
    per_class = np.bincount(y, weights=sample_weight, minlength=2)
    return per_class.sum() / (2 * per_class)


def fit_logistic(
    x: Any,
    y: np.ndarray,
    *,
    c: float = 1.0,
    sample_weight: np.ndarray | None = None,
    class_weight: str | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    method: str = "trust-ncg",
) -> tuple[np.ndarray, float]:
    """Minimise f(w) = ½‖w‖² + Σᵢ Cᵢ·log(1 + exp(−yᵢ·w·[xᵢ, 1])) with yᵢ ∈ {−1, +1} (label
    1 → +1), Cᵢ = c · sample weight · class weight (``"balanced"`` or None), by
    ``scipy.optimize.minimize`` until ‖∇f‖ ≤ tol·‖∇f(0)‖ (``method`` ``"trust-ncg"``, given
    ∇²f·v; ``"L-BFGS-B"`` took 1.7× its CPU time on a real crawl's fits). ``x`` a CSR matrix,
    ``y`` labels 0/1 (both present). Returns (coefficients, intercept), those of
    ``LogisticRegression(solver="liblinear", C=c, class_weight=…).fit(x, y, sample_weight)``
    up to where each optimizer stops."""
    from scipy.optimize import minimize  # +28 MB: only a crawl that fits a page model pays it

    y = np.asarray(y, dtype=int)
    if not (y == 1).any() or (y == 1).all():
        raise ValueError("needs samples of both classes")
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    cw = balanced_weights(y, sw) if class_weight == "balanced" else np.ones(2)
    if class_weight not in (None, "balanced"):
        raise ValueError(f"class_weight must be 'balanced' or None, not {class_weight!r}")
    sign = np.where(y == 1, 1.0, -1.0)
    cost = sw * c * cw[y]
    xt = x.T  # a view (CSC): no copy of the matrix
    nfeat = x.shape[1]

    def xv(v: np.ndarray) -> np.ndarray:
        return x @ v[:nfeat] + v[nfeat]

    def xtv(v: np.ndarray) -> np.ndarray:
        return np.concatenate([xt @ v, [v.sum()]])

    last: dict[str, np.ndarray] = {}

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        loss = np.logaddexp(0.0, -sign * xv(w))  # log(1 + exp(−yᵢ·zᵢ))
        s = np.exp(-loss)  # σ(yᵢ·zᵢ)
        last["w"], last["d"] = w.copy(), cost * s * (1 - s)
        return float(w @ w / 2.0 + cost @ loss), w + xtv(cost * (s - 1) * sign)

    def hessp(w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """∇²f(w)·v = v + Xᵀ·D·X·v, D = diag(Cᵢ·σᵢ·(1 − σᵢ)) at the last w ``fun`` saw."""
        if not np.array_equal(w, last["w"]):
            fun(w)
        return v + xtv(last["d"] * xv(v))

    w0 = np.zeros(nfeat + 1)
    gtol = tol * float(np.linalg.norm(fun(w0)[1]))
    if method == "L-BFGS-B":
        options = {"maxiter": max_iter * 10, "gtol": gtol, "ftol": 0.0}
        res = minimize(fun, w0, jac=True, method=method, options=options)
    else:
        res = minimize(fun, w0, jac=True, hessp=hessp, method=method,
                       options={"maxiter": max_iter, "gtol": gtol})  # fmt: skip
    return res.x[:nfeat], float(res.x[nfeat])


def probabilities(x: Any, coef: np.ndarray, intercept: float) -> np.ndarray:
    """σ(x·w + b) of each row: ``predict_proba(x)[:, 1]``."""
    z = x @ coef + intercept
    return 1 / (1 + np.exp(-z))
