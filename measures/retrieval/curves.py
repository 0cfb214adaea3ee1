"""nDCG@k and Recall@k curves (k = 1…100) of each ranking for one reference, as SVG, drawn with matplotlib
like the results pages (plain Figure objects, no pyplot; text stays text), with no inline CSS: the app's
Content-Security-Policy (`style-src 'self'`) would refuse it and the chart would be a black rectangle."""
from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from measures.results.figure2 import page_svg

STYLE = {"svg.fonttype": "none", "svg.hashsalt": "hume-retrieval", "text.parse_math": False,
         "font.family": "DejaVu Sans", "font.size": 9}


def curves_svg(curves: Mapping[str, Sequence[float]], title: str) -> str:
    """`curves`: {ranking: 200 values, nDCG@1…100 then Recall@1…100}."""
    import matplotlib

    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(9, 3.4))
        left, right = figure.subplots(1, 2)
        ks = range(1, 101)
        for ranking, values in sorted(curves.items()):
            left.plot(ks, values[:100], label=ranking, linewidth=1.4)
            right.plot(ks, values[100:200], label=ranking, linewidth=1.4)
        for axis, name in ((left, "nDCG@k"), (right, "Recall@k")):
            axis.set_xscale("log")  # plain labels: with parse_math off, log ticks read "$\mathdefault{10^{0}}$"
            axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.xaxis.set_minor_formatter(NullFormatter())
            axis.set_xlabel("k")
            axis.set_title(name)
            axis.set_ylim(0, 1)
            axis.grid(True, alpha=0.3)
        right.legend(loc="lower right", fontsize=8)
        figure.suptitle(title)
        figure.tight_layout()
        out = io.StringIO()
        figure.savefig(out, format="svg")
    return page_svg(out.getvalue(), title)
