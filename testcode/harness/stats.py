"""Statistics for Unbound Steady's benchmarks: every figure is reported as
the median with the min and max of its runs (the machines are noisy)."""

import statistics


def med(values, fmt=None):
    """'median (min–max)' of the numbers in values, NaNs left out; 'n/a'
    when none is left. fmt: a %-format, or by default %.0f from 100 up,
    %.2f from 1 up and %.3g below."""
    v = [x for x in values if x == x]
    if not v:
        return "n/a"
    m = statistics.median(v)
    if fmt is None:
        fmt = "%.0f" if abs(m) >= 100 else "%.2f" if abs(m) >= 1 else "%.3g"
    return "%s (%s–%s)" % (fmt % m, fmt % min(v), fmt % max(v))


def median(values):
    """The median of values without NaNs, or NaN when there is none."""
    v = [x for x in values if x == x]
    return statistics.median(v) if v else float("nan")


def ratio(a, b):
    """a / b, or NaN when either is missing or b is 0."""
    if a != a or b != b or not b:
        return float("nan")
    return a / b


def pct(sorted_values, p):
    """The p-quantile (0..1) of an ascending list: the value below which a
    fraction p of them lies (nearest rank); NaN for an empty list."""
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]
