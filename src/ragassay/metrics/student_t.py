"""Student's t distribution: the two-sided p-value of a t statistic, through the regularized
incomplete beta function (a continued fraction, so no scipy is needed)."""

from __future__ import annotations

import math


def student_t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` > 0 degrees of freedom.

    Uses P(|T| >= |t|) = I_x(df / 2, 1 / 2) with x = df / (df + t^2), I the regularized
    incomplete beta function. 1 - x = t^2 / (df + t^2) is passed separately so that small
    |t| (x close to 1) loses no precision.
    """
    if not df > 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df!r}")
    if math.isinf(t):
        return 0.0
    t2 = t * t
    return _betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) = B(x; a, b) / B(a, b) for a, b > 0 and 0 <= x <= 1."""
    if not (a > 0 and b > 0):
        raise ValueError(f"a and b must be > 0, got a={a!r}, b={b!r}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be in [0, 1], got {x!r}")
    return _betainc(a, b, x, 1.0 - x)


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """I_x(a, b) with y = 1 - x supplied by the caller (accurate when x is close to 1)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (
        a * math.log(x) + b * math.log(y) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    )
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); beyond that,
    # use the symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, y) / b


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function, by the modified Lentz method.

    Evaluates 1 / (1 + d_1 / (1 + d_2 / (1 + ...))) with
    d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) and
    d_{2m}   = m (b - m) x / ((a + 2m - 1)(a + 2m)).
    """
    tiny = 1e-300
    eps = 1e-15
    max_iter = 100_000

    def nonzero(v: float) -> float:
        return v if abs(v) >= tiny else tiny

    c = 1.0
    d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, max_iter + 1):
        two_m = 2 * m
        even = m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m))
        d = 1.0 / nonzero(1.0 + even * d)
        c = nonzero(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0))
        d = 1.0 / nonzero(1.0 + odd * d)
        c = nonzero(1.0 + odd / c)
        step = d * c
        h *= step
        if abs(step - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")
