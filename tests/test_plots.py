"""Every chart: a title, axes that say what and in which unit, the kind of number, the designs' own colours, and a
size that stays legible on a laptop-width page."""

import inspect

import matplotlib
import matplotlib.colors
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from wismo.accounting import cost
from wismo.reports import case_study as case_study_report
from wismo.reports.render import answer_chart, charts, price_charts

UNITS = ("bytes", "tokens", "count", "ms", "seconds", "requests", "calls", "%", "lines", "USD", "MB")
KINDS = ("measured", "modelled", "estimated", "reported")
MAX_WIDTH_IN = 12.0  # at the notebooks' 100 dpi, under the ~1,200 px a report gives a chart at 1,280 px
MIN_FONT_PT = 7.5

ORDERS = ["ORD-1001", "ORD-1002", "ORD-1003"]


def _comparison():
    cases = [
        {
            "input": f'"{o}"',
            "label": f"case {i}",
            "unfriendly": False,
            "granular": {"bytes": 800 + i, "calls": 4},
            "focused": {"bytes": 850 + i, "calls": 1},
        }
        for i, o in enumerate(ORDERS)
    ]
    cases.append(
        {
            "input": '""',
            "label": "empty",
            "unfriendly": True,
            "granular": {"bytes": 52, "calls": 1},
            "focused": {"bytes": 52, "calls": 1},
        }
    )
    return {"cases": cases, "summary": {"designs": ["granular", "focused"], "reference": "granular"}}


def _session_run(design, max_sessions, idle_s, growth):
    """An abandoned-sessions run as fuzz.json keeps it: a memory point every 1,000 sessions."""
    curve = [{"sessions": 1000 * i, "rssAboveStartMb": mb} for i, mb in enumerate(growth)]
    return {"design": design, "maxSessions": max_sessions, "idleTimeoutS": idle_s, "curve": curve, "boundMb": 100.0}


def _growth_rows():
    return [
        {
            "design": "granular",
            "orderId": o,
            "base": 549,
            "additions": [120, 300],
            "inputs": [549, 669, 969],
            "total": 2187,
        }
        for o in ORDERS
    ] + [
        {"design": "focused", "orderId": o, "base": 355, "additions": [400], "inputs": [355, 755], "total": 1110}
        for o in ORDERS
    ]


def _recorded_rows():
    return [
        {
            "design": d,
            "turns": t,
            "toolCalls": c,
            "resultBytes": 850,
            "totalTokens": 1000 * t,
            "modelledElapsedMs": 900.0 * t,
        }
        for d, t, c in (("granular", 3, 4), ("focused", 2, 1))
        for _ in range(3)
    ]


def _scale_rows():
    return [
        {"design": d, "lines": n, "resultTokens": n * k, "largestResultTokens": n * k / 2, "totalInput": n * k * 3}
        for d, k in (("granular", 40), ("focused", 35), ("scoped", 30))
        for n in (1, 10, 100)
    ]


def _strategy_rows():
    return [
        {
            "design": d,
            "strategy": how,
            "lines": n,
            "totalInput": n * k * (3 if how == "sequential" and d == "granular" else 1),
            "longestPrefix": n * k // 2,
        }
        for d, k in (("granular", 400), ("focused", 350), ("scoped", 300))
        for how in ("parallel", "sequential")
        for n in (1, 10, 100)
    ]


def _price_rows():
    return [
        {
            "model": m,
            "design": d,
            "caching": mode,
            "lines": n,
            "fitsWindow": n < 100,
            "dollars": p * k * n * (0.6 if mode == "every prefix a hit" else 1),
        }
        for m, p in (("gpt-4.1-mini", 0.4), ("claude-sonnet-4-5", 3.0))
        for d, k in (("granular", 3), ("focused", 2), ("scoped", 2.2))
        for mode in ("no caching", "every prefix a hit")
        for n in (1, 10, 100)
    ]


# One call per chart function, on small inputs of the shapes the notebooks pass.
SAMPLES = {
    "bytes_per_case": lambda: charts.bytes_per_case(_comparison()),
    "calls_per_case": lambda: charts.calls_per_case(_comparison()),
    "case_study_sessions": lambda: charts.case_study_sessions(
        case_study_report.case_study(6000, [18000, 1500], 7, 128000, 75000)
    ),
    "sweep_heatmap": lambda: charts.sweep_heatmap(cost.sweep(6000, [250, 1500, 18000], [1, 2, 3, 7], 128000), 128000),
    "growth_per_call": lambda: charts.growth_per_call(_growth_rows(), "ORD-1002"),
    "answer_requests": lambda: answer_chart.answer_requests(
        [{**r, "toolDefinitions": 300 if r["design"] == "granular" else 120} for r in _growth_rows()],
        "ORD-1002",
        "orderId",
        "python",
        {"granular": [718, 1005, 1719]},
    ),
    "totals_per_case": lambda: charts.totals_per_case(_growth_rows()),
    "recorded_medians": lambda: charts.recorded_medians(_recorded_rows(), "tiktoken-estimated"),
    "framing_by_record": lambda: charts.framing_by_record(
        [
            {"tool": "get_order", "bytes": 301, "python": 112, "csharp-raw-element": 258, "csharp-relaxed": 143},
            {"tool": "get_payment", "bytes": 141, "python": 53, "csharp-raw-element": 137, "csharp-relaxed": 78},
        ],
        "orderId ORD-1004",
    ),
    "caching_curve": lambda: price_charts.caching_curve(
        [
            {"design": d, "calls": n, "caching": mode, "dollars": (6000 * n + r * n * (n - 1) / 2) * f * 0.4 / 1000}
            for d, r in (("broad", 18000), ("scoped", 1500))
            for mode, f in (("no caching", 1), ("every prefix a hit", 0.4))
            for n in range(1, 8)
        ],
        "gpt-4.1-mini",
        1000,
    ),
    "prefix_by_size": lambda: price_charts.prefix_by_size(_strategy_rows(), 1024),
    "prefix_by_call": lambda: price_charts.prefix_by_call(
        [
            {"design": d, "strategy": "parallel", "model": "gpt-4.1-mini", "inputs": inputs, "read": read}
            for d, inputs, read in (("granular", [700, 1000, 1700], [0, 0, 896]), ("focused", [560, 1500], [0, 0]))
        ],
        "gpt-4.1-mini",
        1024,
    ),
    "strategy_per_design": lambda: price_charts.strategy_per_design(
        [
            {"design": d, "strategy": how, "totalInput": k * (2 if how == "sequential" and d == "granular" else 1)}
            for d, k in (("granular", 3400), ("focused", 1700))
            for how in ("parallel", "sequential")
        ],
        "ORD-1004",
    ),
    "price_per_conversations": lambda: price_charts.price_per_conversations(
        [r for r in _price_rows() if r["lines"] == 1], ["gpt-4.1-mini", "claude-sonnet-4-5"], 1000, "ORD-1004"
    ),
    "price_by_size": lambda: price_charts.price_by_size(_price_rows(), "gpt-4.1-mini", 1000),
    "strategy_by_size": lambda: price_charts.strategy_by_size(_strategy_rows()),
    "scale_lines": lambda: charts.scale_lines(
        _scale_rows(),
        "resultTokens",
        "Tokens of all tool results (tiktoken-estimated)",
        "tokens (log scale)",
        {"context window": 128000},
    ),
    "session_memory": lambda: charts.session_memory(
        _session_run("focused", 100, 600.0, [0.0, 5.9, 11.0, 12.5]),
        _session_run("focused", 10_000, 1800.0, [0.0, 36.2, 72.2, 108.1]),
    ),
}
# Charts of one design of ours (the server the figures were measured on), beside grey references.
ONE_DESIGN = {"session_memory": "focused"}
# Charts of the case study's own two designs (broad, scoped tools), which are not ours and have their own colours.
NOT_OUR_DESIGNS = {"case_study_sessions", "sweep_heatmap", "framing_by_record", "caching_curve"}

CHARTS = sorted(
    name
    for module in (charts, price_charts, answer_chart)
    for name, fn in vars(module).items()
    if inspect.isfunction(fn)
    and not name.startswith("_")
    and fn.__module__ == module.__name__
    and inspect.signature(fn).return_annotation in (Figure, "Figure")
)


_DRAWN: dict[str, Figure] = {}  # every check only reads a figure: each sample is made and drawn once per module


def _sample(name: str) -> Figure:
    """A layout sample made and drawn, the same figure for every check of this module."""
    if name not in _DRAWN:
        _DRAWN[name] = fig = LAYOUT_SAMPLES[name]()
        fig.canvas.draw()
    return _DRAWN[name]


@pytest.fixture(scope="module", autouse=True)
def _close_samples():
    yield
    for fig in _DRAWN.values():
        plt.close(fig)
    _DRAWN.clear()


@pytest.fixture
def chart(request):
    if request.param not in SAMPLES:
        pytest.skip(f"charts.{request.param} has no sample input in tests/test_plots.py yet")
    return request.param, _sample(request.param)


def _axes(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def test_every_chart_function_is_covered():
    assert set(SAMPLES) <= set(CHARTS), set(SAMPLES) - set(CHARTS)


@pytest.mark.parametrize("chart", CHARTS, indirect=True)
def test_titled_with_units_and_the_kind_of_number(chart):
    name, fig = chart
    titles = [ax.get_title() for ax in fig.axes] + [fig.get_suptitle()]
    assert any(t.strip() for t in titles), f"{name}: no title"
    for ax in _axes(fig):
        assert any(u in ax.get_ylabel() for u in UNITS), f"{name}: y axis {ax.get_ylabel()!r} names no unit"
        ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert ax.get_xlabel() or ticks, f"{name}: x axis says nothing"
    labels = " ".join(titles + [ax.get_ylabel() for ax in fig.axes])
    assert any(k in labels for k in KINDS), (
        f"{name}: never says whether its numbers are measured, modelled, estimated or reported"
    )


@pytest.mark.parametrize("chart", CHARTS, indirect=True)
def test_legible_at_laptop_width(chart):
    name, fig = chart
    assert fig.get_figwidth() <= MAX_WIDTH_IN, f"{name}: {fig.get_figwidth()} in wide, shrunk on a 1,280 px page"
    fig.canvas.draw()
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    small = sorted({(t.get_fontsize(), t.get_text()[:30]) for t in texts if t.get_fontsize() < MIN_FONT_PT})
    assert not small, f"{name}: text under {MIN_FONT_PT} pt: {small}"
    # Annotations placed in data coordinates can land off the figure (or nowhere, on a log axis).
    renderer, page = fig.canvas.get_renderer(), fig.bbox
    for ax in fig.axes:
        for t in ax.texts:
            box = t.get_window_extent(renderer)
            inside = (
                np.isfinite(box.extents).all()
                and page.x0 - 1 <= box.x0
                and box.x1 <= page.x1 + 1
                and page.y0 - 1 <= box.y0
                and box.y1 <= page.y1 + 1
            )
            assert inside, f"{name}: annotation {t.get_text()!r} is drawn off the chart"


def _colours(fig):
    """The RGB colour of every filled patch and line, alpha ignored."""
    found = set()
    for ax in _axes(fig):
        for patch in ax.patches:
            if patch.get_fill() and patch.get_facecolor()[3] > 0:
                found.add(matplotlib.colors.to_hex(patch.get_facecolor()[:3]))
        for line in ax.lines:
            found.add(matplotlib.colors.to_hex(line.get_color()))
    return found


@pytest.mark.parametrize("chart", CHARTS, indirect=True)
def test_designs_keep_their_colours(chart):
    name, fig = chart
    if name in NOT_OUR_DESIGNS:
        pytest.skip(f"{name} draws the case study's designs or client profiles, not our designs")
    used = _colours(fig)
    designs = {matplotlib.colors.to_hex(c) for c in charts.DESIGN_COLORS.values()}
    drawn = (ONE_DESIGN[name],) if name in ONE_DESIGN else ("granular", "focused")
    assert {matplotlib.colors.to_hex(charts.DESIGN_COLORS[d]) for d in drawn} <= used, name
    greys = {c for c in used if len(set(matplotlib.colors.to_rgb(c))) == 1}
    assert used - greys <= designs, f"{name}: colours outside charts.DESIGN_COLORS: {used - greys - designs}"


# The shapes the notebooks chart, with their numbers as a build produced them: six orders of nearly equal totals
# (the tallest bar ends at the right, under where a default legend goes), and the scripted runs' long kinds.
_SIX_ORDERS = [f"ORD-100{i}" for i in range(1, 7)]
LAYOUT_SAMPLES = {
    **SAMPLES,
    "totals_per_case (six orders)": lambda: charts.totals_per_case(
        [
            {"design": d, "orderId": o, "total": t}
            for d, totals in (
                ("granular", (2131, 2139, 2001, 2259, 2107, 2139)),
                ("focused", (1043, 1050, 939, 1129, 1019, 1049)),
            )
            for o, t in zip(_SIX_ORDERS, totals)
        ]
    ),
    "recorded_medians (scripted runs)": lambda: charts.recorded_medians(
        _recorded_rows(), "scripted (no model), tiktoken-estimated", "scripted (no model)"
    ),
}
MIN_GAP_PX = 16  # at the notebooks' 100 dpi: a y-label closer to the next panel reads as that panel's


def _overlap(a, b) -> bool:
    """Whether two display boxes share more than a pixel's sliver."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1


def _data_boxes(fig, renderer):
    """What a legend must leave visible: every drawn bar, every text on the axes (bar labels, annotations) and every
    plotted point of a line, as display boxes named for the message."""
    import matplotlib.transforms

    for ax in _axes(fig):
        for patch in ax.patches:
            box = patch.get_window_extent(renderer)
            if patch.get_visible() and box.width > 0 and box.height > 0:
                yield f"bar at x={box.x0:.0f}px", box
        for text in ax.texts:
            if text.get_visible() and text.get_text().strip():
                yield f"label {text.get_text()!r}", text.get_window_extent(renderer)
        for line in ax.lines:
            for x, y in line.get_transform().transform(line.get_xydata()):
                if np.isfinite([x, y]).all():
                    yield f"point of line {line.get_label()!r}", matplotlib.transforms.Bbox([[x, y], [x, y]])


def _legends(fig):
    return [lg for lg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)] if lg is not None]


def _drawn(name):
    """A layout sample drawn, with its renderer."""
    fig = _sample(name)
    return fig, fig.canvas.get_renderer()


@pytest.mark.parametrize("name", sorted(LAYOUT_SAMPLES))
def test_legends_cover_no_bar_label_or_point(name):
    fig, renderer = _drawn(name)
    for legend in _legends(fig):
        frame = legend.get_window_extent(renderer)
        covered = [what for what, box in _data_boxes(fig, renderer) if _overlap(frame, box.expanded(1, 1))]
        points = [what for what, box in _data_boxes(fig, renderer) if box.width == 0 and frame.contains(box.x0, box.y0)]
        assert not covered and not points, f"{name}: the legend covers {(covered + points)[:4]}"


@pytest.mark.parametrize("name", sorted(LAYOUT_SAMPLES))
def test_side_by_side_panels_keep_their_labels_apart(name):
    fig, renderer = _drawn(name)
    panels = sorted((ax for ax in _axes(fig) if ax.get_visible()), key=lambda ax: ax.get_window_extent(renderer).x0)
    for left, right in zip(panels, panels[1:]):
        left_box, right_box = left.get_window_extent(renderer), right.get_window_extent(renderer)
        if right_box.x0 < left_box.x1 or not _overlap_rows(left_box, right_box):
            continue  # not side by side
        # The left panel's axes and the texts on them (bar labels) against the right panel's y-label and tick
        # labels; the titles, above both, against each other.
        reach = max([left_box.x1, *(t.get_window_extent(renderer).x1 for t in left.texts if t.get_text())])
        label = right.yaxis.label.get_window_extent(renderer)
        ticks = [t.get_window_extent(renderer) for t in right.get_yticklabels() if t.get_text()]
        start = min([label.x0, *(t.x0 for t in ticks)])
        assert start - reach >= MIN_GAP_PX, (
            f"{name}: the y-label {right.get_ylabel()!r} starts {start - reach:.0f} px from the panel to its left"
        )
        titles = left.title.get_window_extent(renderer), right.title.get_window_extent(renderer)
        assert titles[1].x0 - titles[0].x1 >= MIN_GAP_PX, (
            f"{name}: titles {left.get_title()!r} and {right.get_title()!r} run into each other"
        )


def _overlap_rows(a, b) -> bool:
    """Whether two boxes share some height (panels in one row)."""
    return min(a.y1, b.y1) - max(a.y0, b.y0) > 0
