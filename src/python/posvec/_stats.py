"""Two-sided p-values of correlation coefficients, without SciPy.

gensim's evaluate_word_pairs returns SciPy's pearsonr and spearmanr results;
both p-values are the t-test of a correlation r over n pairs, which is the
regularized incomplete beta function I_x(a, b) at x = 1 - r², a = (n - 2)/2,
b = 1/2. I_x is evaluated with its continued fraction (modified Lentz method).
"""

from __future__ import annotations

import math
from typing import NamedTuple


class PearsonRResult(NamedTuple):
    """Pearson's r and its two-sided p-value (fields as SciPy's PearsonRResult)."""

    statistic: float
    pvalue: float


class SpearmanrResult(NamedTuple):
    """Spearman's rho and its two-sided p-value (fields as SciPy's SpearmanrResult)."""

    correlation: float
    pvalue: float

    @property
    def statistic(self) -> float:  # SciPy ≥ 1.9 names it statistic
        return self.correlation


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        # even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))
        num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        # odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # The fraction converges fast for x < (a + 1)/(a + b + 2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def correlation_pvalue(r: float, n: int) -> float:
    """Two-sided p-value of correlation r over n samples (t-test with n - 2 dof)."""
    if n < 3 or math.isnan(r):
        return math.nan
    if abs(r) >= 1.0:
        return 0.0
    return regularized_beta((n - 2) / 2.0, 0.5, 1.0 - r * r)
