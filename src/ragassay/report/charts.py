"""The report's inline SVG charts (metric means with CIs, failure label counts) and helpers."""

from __future__ import annotations

import html
import math
from typing import Any, TypeGuard

from ..termsafe import visible

# Category of a failure label = its prefix; drawn in this order and these colours
# (Okabe-Ito, readable by colour-blind readers). Unknown prefixes come last, in grey.
CATEGORY_COLORS: dict[str, str] = {
    "retrieval_failure": "#0072B2",
    "parsing_failure": "#E69F00",
    "citation_failure": "#009E73",
    "answer_failure": "#CC79A7",
    "evaluation_failure": "#7F7F7F",
}
OTHER_COLOR = "#999999"

# Chart geometry in SVG user units (the SVG scales down with the window).
LABEL_W = 190  # metric name column
BAR_PLOT_W = 300  # the 0..1 axis
VALUE_W = 56  # mean printed right of the axis
ROW_H = 24
BAR_H = 14
FAIL_LABEL_W = 240
FAIL_PLOT_W = 260


# --- small formatting helpers --------------------------------------------------------


def esc(value: Any) -> str:
    """Escaped text for HTML and SVG content or attribute values, without control or bidi
    control characters (:func:`ragassay.termsafe.visible`): the one escape of every page."""
    return html.escape(visible(value), quote=True)


def fmt_num(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—" if value is None else str(value)
    return f"{value:.{digits}f}"


def _px(value: float) -> str:
    """An SVG coordinate with fixed precision, so pages compare byte for byte."""
    return f"{value:.1f}"


def is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _unit(value: float) -> float:
    """Clamp to the 0..1 axis (a mean outside it still prints its true value)."""
    return min(max(float(value), 0.0), 1.0)


def category_of(label: str) -> str:
    return label.split(".", 1)[0]


def short_label(label: str) -> str:
    return label.split(".", 1)[-1]


def category_color(category: str) -> str:
    return CATEGORY_COLORS.get(category, OTHER_COLOR)


def ci_text(agg: dict[str, Any]) -> str:
    lo, hi = agg.get("ci_low"), agg.get("ci_high")
    return f"[{fmt_num(lo)}, {fmt_num(hi)}]" if is_number(lo) and is_number(hi) else "—"


# --- charts ---------------------------------------------------------------------------


def metric_chart(aggs: dict[str, dict[str, Any]], label: str) -> str:
    """Horizontal bars of the means on a 0..1 axis, the bootstrap CI drawn as a whisker.

    A metric whose mean is None keeps its row, written "not measured (k missing)".
    """
    names = list(aggs)
    top, bottom = 6, 22
    width = LABEL_W + BAR_PLOT_W + VALUE_W
    height = top + ROW_H * len(names) + bottom
    plot_bottom = top + ROW_H * len(names)
    out = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img" aria-label="{esc(label)}" '
           'font-family="system-ui, sans-serif" font-size="12">',
           f"<title>{esc(label)}</title>"]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = _px(LABEL_W + tick * BAR_PLOT_W)
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{plot_bottom}" stroke="#d8dee4"/>')
        out.append(f'<text x="{x}" y="{plot_bottom + 15}" text-anchor="middle" '
                   f'fill="#59636e">{tick:g}</text>')
    for i, name in enumerate(names):
        out.append(_metric_bar(name, aggs[name], top + i * ROW_H + ROW_H / 2))
    out.append("</svg>")
    return "".join(out)


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the metric is better (unknown names: yes)."""
    from ..metrics.measures import measure_info

    try:
        return measure_info(name).higher_is_better
    except ValueError:
        return True


def _metric_bar(name: str, agg: dict[str, Any], cy: float) -> str:
    mean, lo, hi = agg.get("mean"), agg.get("ci_low"), agg.get("ci_high")
    lower = not higher_is_better(name)
    shown = f"{name} ↓" if lower else name
    label = (f'<text x="{LABEL_W - 8}" y="{_px(cy)}" dy="0.35em" text-anchor="end" '
             f'fill="#1f2328">{esc(shown)}</text>')
    if not is_number(mean):
        note = f"not measured ({agg.get('missing', '?')} missing)"
        return (f"<g><title>{esc(name)}: {esc(note)}</title>{label}"
                f'<text x="{LABEL_W + 6}" y="{_px(cy)}" dy="0.35em" fill="#59636e" '
                f'font-style="italic">{esc(note)}</text></g>')
    tip = (f"{name}: mean {fmt_num(mean)}, 95% CI {ci_text(agg)}, n {agg.get('n', '—')}, "
           f"missing {agg.get('missing', '—')}" + (" (lower is better)" if lower else ""))
    # A lower-is-better metric (↓) is drawn from the right end of the axis to its mean: the
    # bar ends at the mean on every row (where the whisker is), and a long bar is good.
    end = _unit(mean) * BAR_PLOT_W
    x, width = (LABEL_W + end, BAR_PLOT_W - end) if lower else (LABEL_W, end)
    parts = [f"<g><title>{esc(tip)}</title>", label,
             f'<rect x="{_px(x) if lower else LABEL_W}" y="{_px(cy - BAR_H / 2)}" '
             f'width="{_px(width)}" height="{BAR_H}" '
             f'fill="{"#e8b98f" if lower else "#8fb8de"}"/>']
    if is_number(lo) and is_number(hi):
        x1, x2 = (_px(LABEL_W + _unit(v) * BAR_PLOT_W) for v in (lo, hi))
        y1, y2 = _px(cy - 5), _px(cy + 5)
        parts.append(f'<path d="M{x1} {_px(cy)}H{x2}M{x1} {y1}V{y2}M{x2} {y1}V{y2}" '
                     'stroke="#1f2328" stroke-width="1.5" fill="none"/>')
    parts.append(f'<text x="{LABEL_W + BAR_PLOT_W + 8}" y="{_px(cy)}" dy="0.35em" '
                 f'fill="#1f2328">{fmt_num(mean)}</text></g>')
    return "".join(parts)


def nice_step(most: int, ticks: int = 5) -> int:
    """A round tick step (1, 2, 5 × 10ⁿ) giving at most about ``ticks`` intervals up to
    ``most``; 1 up to 10."""
    if most <= 10:
        return 1
    raw = most / ticks
    power = 10 ** math.floor(math.log10(raw))
    return int(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def failure_chart(fired: list[tuple[str, int]], label: str) -> str:
    """Horizontal bars of label counts (questions that earned the label), coloured by category."""
    top, bottom = 6, 22
    width = FAIL_LABEL_W + FAIL_PLOT_W + 40
    plot_bottom = top + ROW_H * len(fired)
    height = plot_bottom + bottom
    most = max(n for _, n in fired)
    step = nice_step(most)
    axis_max = math.ceil(most / step) * step
    out = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img" aria-label="{esc(label)}" '
           'font-family="system-ui, sans-serif" font-size="12">',
           f"<title>{esc(label)}</title>"]
    for tick in range(0, axis_max + 1, step):
        x = _px(FAIL_LABEL_W + tick / axis_max * FAIL_PLOT_W)
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{plot_bottom}" stroke="#d8dee4"/>')
        out.append(f'<text x="{x}" y="{plot_bottom + 15}" text-anchor="middle" '
                   f'fill="#59636e">{tick}</text>')
    for i, (name, n) in enumerate(fired):
        cy = top + i * ROW_H + ROW_H / 2
        out.append(
            f"<g><title>{esc(name)}: {n}</title>"
            f'<text x="{FAIL_LABEL_W - 8}" y="{_px(cy)}" dy="0.35em" text-anchor="end" '
            f'fill="#1f2328">{esc(short_label(name))}</text>'
            f'<rect x="{FAIL_LABEL_W}" y="{_px(cy - BAR_H / 2)}" '
            f'width="{_px(n / axis_max * FAIL_PLOT_W)}" height="{BAR_H}" '
            f'fill="{category_color(category_of(name))}"/>'
            f'<text x="{_px(FAIL_LABEL_W + n / axis_max * FAIL_PLOT_W + 6)}" y="{_px(cy)}" '
            f'dy="0.35em" fill="#1f2328">{n}</text></g>')
    out.append("</svg>")
    return "".join(out)
