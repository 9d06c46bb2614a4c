"""The one number format and plain-text grid of the text tables (wismo tokens, the bench, the reports' cells)."""

from wismo.core.textgrid import count, figure, grid


def test_counts_and_figures_read_as_a_reader_expects():
    assert count(1234567) == "1,234,567"
    assert figure(2000.0) == "2,000"
    assert figure(0.15) == "0.15"
    assert figure(12.345) == "12.3" and figure(12.345, 2) == "12.35"
    assert figure(0.0) == "0.0"


def test_a_grid_aligns_words_left_and_numbers_right_and_trims_unless_told():
    lines = grid(["tool", "tokens", "note"], [["get_order", "1,005", ""], ["x", "7", "big"]], left=(0, 2))
    assert lines == ["tool       tokens  note", "get_order   1,005", "x               7  big"]
    kept = grid(["", "n"], [["ab", "1"]], minimum=(0, 5), indent="  ", trim=False)
    assert kept == [" " * 10 + "n", "  ab      1"]  # indent, the empty first column, the spacing, n padded to 5
