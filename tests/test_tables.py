"""How every table reads: headers in words with units, counts with separators, small figures kept, lists as text."""

from wismo.render import tables


def test_cells_read_as_a_reader_expects():
    assert tables.cell(420000) == "420,000"
    assert tables.cell(2914.9) == "2,914.9" and tables.cell(2915.0) == "2,915"
    assert tables.cell(0.15) == "0.15" and tables.cell(0.075) == "0.075"  # a price per million tokens is not 0.1
    assert tables.cell([549, 678, 1032]) == "549, 678, 1,032" and tables.cell([]) == "none"
    assert tables.cell(True) == "yes" and tables.cell(None) == "–"
    assert tables.cell({"overhead_ms": 400.0}) == "overhead_ms: 400.0"


def test_a_table_has_no_index_and_headers_in_words():
    html = tables.show([{"orderId": "ORD-1004", "totalInput": 420000, "inputs": [1, 2]}]).to_html()
    assert "order" in html and "session input (tokens)" in html and "input of each model call (tokens)" in html
    assert "420,000" in html and "1, 2" in html
    assert 'class="row_heading' not in html  # no index column
    assert tables.header("toolCalls") == "tool calls" and tables.header("someNewKey") == "some new key"
