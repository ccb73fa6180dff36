"""Minimum detectable effect of Welch's two-sided t-test, computed with SciPy, for the report's
tests: the smallest difference of means that the test at level alpha detects with probability
power, when the observed standard deviations are the true ones, under normality.

The mean difference D ~ N(d, SE^2), SE^2 = sa^2/na + sb^2/nb; the sample variances are
sigma^2 * chi2(n-1)/(n-1), independent of D. Given them, the test rejects when
|D| > t(1 - alpha/2; df_hat) * SE_hat (Welch-Satterthwaite df_hat). The power is the expectation of
that over both chi-squared variables; the effect is solved with scipy.optimize.brentq.

The expectation is integrated either with scipy.integrate.dblquad over the chi-squared densities
(--adaptive; minutes per figure), or with a 400 x 400 Gauss-Legendre rule over their quantiles with
exact t quantiles at every node (the default; seconds). For 5 repetitions a side, SD sqrt(2.5) on
each, alpha 0.0125, both print 4.39886.

usage: python3 mde_welch.py [--adaptive] na sa nb sb alpha [power]
"""
import sys

import numpy as np
from scipy import integrate, optimize, special, stats


def rejection_bound(na, sa, nb, sb, alpha, xa, xb):
    """k = t(1 - alpha/2; df_hat) * SE_hat / SE for sample variances sigma^2 * x / (n-1)."""
    va, vb = sa * sa / na, sb * sb / nb
    wa, wb = va * xa / (na - 1), vb * xb / (nb - 1)
    df = (wa + wb) ** 2 / (wa * wa / (na - 1) + wb * wb / (nb - 1))
    return stats.t.ppf(1 - alpha / 2, df) * np.sqrt((wa + wb) / (va + vb))


def rejects(k, delta):
    return stats.norm.sf(k - delta) + stats.norm.cdf(-k - delta)


def mde(na, sa, nb, sb, alpha, power=0.8, adaptive=False):
    se = (sa * sa / na + sb * sb / nb) ** 0.5
    ca, cb = stats.chi2(na - 1), stats.chi2(nb - 1)
    if adaptive:
        def power_at(delta):
            value, _ = integrate.dblquad(
                lambda xb, xa: rejects(rejection_bound(na, sa, nb, sb, alpha, xa, xb), delta) * ca.pdf(xa) * cb.pdf(xb),
                0, ca.ppf(1 - 1e-12), 0, cb.ppf(1 - 1e-12), epsabs=1e-11, epsrel=1e-10)
            return value
    else:
        u, w = special.roots_legendre(400)
        u, w = (u + 1) / 2, w / 2
        xa, xb = np.meshgrid(ca.ppf(u), cb.ppf(u), indexing="ij")
        weights = np.outer(w, w)
        k = rejection_bound(na, sa, nb, sb, alpha, xa, xb)

        def power_at(delta):
            return float(np.sum(weights * rejects(k, delta)))
    hi = 4.0
    while power_at(hi) < power:
        hi *= 2
    delta = optimize.brentq(lambda d: power_at(d) - power, 0, hi, xtol=1e-10)
    return delta * se


if __name__ == "__main__":
    argv = sys.argv[1:]
    adaptive = "--adaptive" in argv
    args = [float(a) for a in argv if a != "--adaptive"]
    na, sa, nb, sb, alpha = int(args[0]), args[1], int(args[2]), args[3], args[4]
    power = args[5] if len(args) > 5 else 0.8
    print("%.6g" % mde(na, sa, nb, sb, alpha, power, adaptive))
