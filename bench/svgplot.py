#!/usr/bin/env python3
"""Write a line plot as a small self-contained SVG file, with no plotting
library (the benchmarks run on a bare Debian machine). Used by the
benchmark scripts to put a picture next to their Markdown results.

usage (as a module): svgplot.line_plot(path, title, xlabel, ylabel,
                                       series, log_y=True)
  series: list of (label, colour, [(x, y), ...])"""

import math

WIDTH, HEIGHT = 800, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50


def _ticks(lo, hi, log):
    """Tick values between lo and hi: powers of ten on a log axis, about
    six round numbers on a linear one."""
    if log:
        return [10.0 ** e for e in range(int(math.floor(lo)), int(math.ceil(hi)) + 1)]
    span = hi - lo or 1.0
    step = 10 ** math.floor(math.log10(span / 6))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _fmt(v):
    return ("%g" % v) if v < 1e4 else ("%.0e" % v)


def line_plot(path, title, xlabel, ylabel, series, log_y=True):
    """Plot every series as a polyline; on a log y axis values <= 0 are
    drawn at the bottom."""
    xs = [x for _, _, pts in series for x, _ in pts]
    ys = [y for _, _, pts in series for _, y in pts if not log_y or y > 0]
    if not xs or not ys:
        raise ValueError("nothing to plot")
    x0, x1 = min(xs), max(xs)
    x1 = x1 if x1 > x0 else x0 + 1
    if log_y:
        y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
        y1 = y1 if y1 > y0 else y0 + 1
    else:
        y0, y1 = 0.0, max(ys) * 1.05 or 1.0
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + (x - x0) / (x1 - x0) * pw

    def py(y):
        v = math.log10(y) if log_y and y > 0 else (y0 if log_y else y)
        return TOP + ph - (v - y0) / (y1 - y0) * ph

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (WIDTH, HEIGHT),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (LEFT, title)]
    for t in _ticks(y0, y1, log_y):
        y = py(t)
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' %
                   (LEFT, LEFT + pw, y, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (LEFT - 5, y + 4, _fmt(t)))
    for t in _ticks(x0, x1, False):
        x = px(t)
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>' %
                   (x, x, TOP, TOP + ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' %
                   (x, TOP + ph + 16, _fmt(t)))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' %
               (LEFT, TOP, pw, ph))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' %
               (LEFT + pw // 2, HEIGHT - 12, xlabel))
    out.append('<text transform="translate(16,%d) rotate(-90)" text-anchor="middle">%s</text>' %
               (TOP + ph // 2, ylabel))
    for i, (label, colour, pts) in enumerate(series):
        line = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts)
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"/>' %
                   (colour, line))
        out.append('<text x="%d" y="%d" fill="%s">%s</text>' %
                   (LEFT + pw - 230, TOP + 16 + 15 * i, colour, label))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
