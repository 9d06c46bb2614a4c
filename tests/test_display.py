"""A chart a notebook shows: displayed where show() stands in the cell, after its finding, with alt text."""

import matplotlib.pyplot as plt
from IPython.core.interactiveshell import InteractiveShell
from IPython.display import Markdown, display
from IPython.utils.capture import capture_output

from wismo.reports.render.display import show


def test_show_displays_at_once_even_before_more_output_in_the_cell():
    InteractiveShell.instance()  # the display hooks capture_output replaces are the shell's
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1])
    ax.set_title("A line (measured)")
    with capture_output() as captured:
        returned = show(fig, "It rises.")
        display(Markdown("The next sentence of the cell."))  # the show() call is not the cell's last expression
    assert returned is None  # a call ending a cell shows nothing a second time
    kinds = [next(k for k in ("image/png", "text/markdown") if k in o.data) for o in captured.outputs]
    assert kinds == ["text/markdown", "image/png", "text/markdown"]
    finding, chart = captured.outputs[0], captured.outputs[1]
    assert finding.data["text/markdown"] == "It rises."
    assert chart.metadata["image/png"]["alt"] == "A line (measured). It rises."
    assert not plt.get_fignums()  # closed once drawn: the inline backend does not show it again
