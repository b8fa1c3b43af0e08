"""TF-IDF and L2-regularised logistic regression on sparse counts, in NumPy and SciPy's sparse
matrices: what the self-training page model fitted with scikit-learn's
``TfidfTransformer(sublinear_tf=True)`` and ``LogisticRegression(solver="liblinear")``, without
importing scikit-learn in a crawl process (its import costs ≈ 70 MB of resident memory there,
most of it SciPy's statistics, which its utilities import; docs/scale.md, issue 16).

:func:`fit_logistic` is liblinear's primal solver of L2-regularised logistic regression
(``L2R_LR``): the trust-region Newton method of Lin, Weng & Keerthi, "Trust Region Newton
Method for Large-Scale Logistic Regression" (JMLR 9, 2008; Algorithm 1, with the conjugate
gradient of its Algorithm 2), as liblinear 2.x implements it (``tron.cpp``, ``linear.cpp``,
vendored by scikit-learn 1.9): the same objective (the bias a feature of value 1, regularised
too), the same stopping rule (‖∇f‖ ≤ tol·max(min(#pos, #neg), 1)/l·‖∇f(0)‖) and the same
trust-region updates, so that it stops at the same iterate. Only the order of floating-point
sums differs (liblinear also puts the negatives first); ``tests/test_learning.py`` holds the coefficients and probabilities equal to
scikit-learn's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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
    tol: float = 1e-4,
    max_iter: int = 100,
) -> tuple[np.ndarray, float]:
    """Minimise ½‖w‖² + Σᵢ Cᵢ·log(1 + exp(−yᵢ·w·[xᵢ, 1])) with yᵢ ∈ {−1, +1} (label 1 → +1),
    Cᵢ = c · sample weight · class weight (``"balanced"`` or None): liblinear's ``L2R_LR`` by
    trust-region Newton (see the module). ``x`` a CSR matrix, ``y`` labels 0/1 (both present).
    Returns (coefficients, intercept): ``LogisticRegression(solver="liblinear", C=c, tol=tol,
    max_iter=max_iter, class_weight=…).fit(x, y, sample_weight)``'s ``coef_[0]`` and
    ``intercept_[0]``."""
    y = np.asarray(y, dtype=int)
    if not (y == 1).any() or (y == 1).all():
        raise ValueError("needs samples of both classes")
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    cw = balanced_weights(y, sw) if class_weight == "balanced" else np.ones(2)
    if class_weight not in (None, "balanced"):
        raise ValueError(f"class_weight must be 'balanced' or None, not {class_weight!r}")
    sign = np.where(y == 1, 1.0, -1.0)
    cost = sw * c * cw[y]
    pos = int((y == 1).sum())
    eps = tol * max(min(pos, len(y) - pos), 1) / len(y)
    xt = x.T  # a view (CSC): no copy of the matrix
    nfeat = x.shape[1]

    def xv(v: np.ndarray) -> np.ndarray:
        return x @ v[:nfeat] + v[nfeat]

    def xtv(v: np.ndarray) -> np.ndarray:
        return np.concatenate([xt @ v, [v.sum()]])

    state: dict[str, np.ndarray] = {}

    def fun(w: np.ndarray) -> float:
        yz = sign * xv(w)
        state["z"] = yz
        loss = np.where(yz >= 0, np.log(1 + np.exp(-np.abs(yz))),
                        -yz + np.log(1 + np.exp(np.minimum(yz, 0))))  # fmt: skip
        return float(w @ w / 2.0 + cost @ loss)

    def grad(w: np.ndarray) -> np.ndarray:
        s = 1 / (1 + np.exp(-state["z"]))
        state["d"] = s * (1 - s)
        return w + xtv(cost * (s - 1) * sign)

    def hv(s: np.ndarray) -> np.ndarray:
        return s + xtv(cost * state["d"] * xv(s))

    w = np.zeros(nfeat + 1)
    f = fun(w)
    g = grad(w)
    delta = gnorm1 = float(np.linalg.norm(g))
    it = 1
    search = gnorm1 > eps * gnorm1
    while it <= max_iter and search:
        s, r = _trcg(hv, g, delta)
        w_new = w + s
        gs = float(g @ s)
        prered = -0.5 * (gs - float(s @ r))
        fnew = fun(w_new)
        actred = f - fnew
        snorm = float(np.linalg.norm(s))
        if it == 1:
            delta = min(delta, snorm)
        alpha = 4.0 if fnew - f - gs <= 0 else max(0.25, -0.5 * (gs / (fnew - f - gs)))
        if actred < 1e-4 * prered:
            delta = min(max(alpha, 0.25) * snorm, 0.5 * delta)
        elif actred < 0.25 * prered:
            delta = max(0.25 * delta, min(alpha * snorm, 0.5 * delta))
        elif actred < 0.75 * prered:
            delta = max(0.25 * delta, min(alpha * snorm, 4.0 * delta))
        else:
            delta = max(delta, min(alpha * snorm, 4.0 * delta))
        if actred > 1e-4 * prered:
            it += 1
            w, f = w_new, fnew
            g = grad(w)
            if float(np.linalg.norm(g)) <= eps * gnorm1:
                break
        if f < -1.0e32 or (abs(actred) <= 0 and prered <= 0):
            break
        if abs(actred) <= 1.0e-12 * abs(f) and abs(prered) <= 1.0e-12 * abs(f):
            break
    return w[:nfeat], float(w[nfeat])


def _trcg(hv: Callable[[np.ndarray], np.ndarray], g: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Conjugate gradient for H·s = −g inside the trust region ‖s‖ ≤ delta (liblinear's
    ``TRON::trcg``); returns the step s and the residual r = −g − H·s."""
    s = np.zeros_like(g)
    r = -g
    d = r.copy()
    cgtol = 0.1 * float(np.linalg.norm(g))
    rtr = float(r @ r)
    while float(np.linalg.norm(r)) > cgtol:
        hd = hv(d)
        alpha = rtr / float(d @ hd)
        s += alpha * d
        if float(np.linalg.norm(s)) > delta:
            s -= alpha * d
            std, sts, dtd = float(s @ d), float(s @ s), float(d @ d)
            dsq = delta * delta
            rad = math.sqrt(std * std + dtd * (dsq - sts))
            alpha = (dsq - sts) / (std + rad) if std >= 0 else (rad - std) / dtd
            s += alpha * d
            r -= alpha * hd
            break
        r -= alpha * hd
        rnew = float(r @ r)
        d = r + (rnew / rtr) * d
        rtr = rnew
    return s, r


def probabilities(x: Any, coef: np.ndarray, intercept: float) -> np.ndarray:
    """σ(x·w + b) of each row: ``predict_proba(x)[:, 1]``."""
    z = x @ coef + intercept
    return 1 / (1 + np.exp(-z))
