"""How every table reads: headers in words with units, counts with separators, small figures kept, lists as text."""

import math
import re

from wismo.reports.render import tables


def test_cells_read_as_a_reader_expects():
    assert tables.cell(420000) == "420,000"
    assert tables.cell(2914.9) == "2,914.9" and tables.cell(2915.0) == "2,915"
    assert tables.cell(0.15) == "0.15" and tables.cell(0.075) == "0.075"  # a price per million tokens is not 0.1
    assert tables.cell([]) == "none" and tables.cell(["orderId", "paymentId"]) == "orderId, paymentId"
    assert tables.cell(True) == "yes" and tables.cell(None) == "–"
    assert tables.cell({"overhead ms": 400.0}) == "overhead ms: 400"


def test_a_count_is_an_integer_and_nothing_is_nan():
    assert tables.cell(3.0) == "3" and tables.cell(1000.0) == "1,000"
    assert tables.cell(math.nan) == "–"
    # A list of numbers must not read as more numbers: a comma is also the thousands separator.
    assert tables.cell([549, 678, 1032]) == "549 · 678 · 1,032"
    assert tables.cell([1.0, 10.0, 100.0]) == "1 · 10 · 100"


def test_money_reads_as_the_charts_print_it():
    assert tables.cell(1.1834, usd=True) == "USD 1.18" and tables.cell(0.624, usd=True) == "USD 0.62"
    assert tables.cell(0.00107, usd=True) == "USD 0.00107" and tables.cell(None, usd=True) == "–"
    # A column whose header says USD is money, without the caller saying so.
    html = tables.show([{"price (USD per 1,000 conversations)": 1.1834}]).to_html()
    assert "USD 1.18" in html and "USD per 1,000 conversations" in html  # the unit keeps its case


def test_a_column_of_counts_with_a_gap_stays_counts():
    # pandas would make this column float (3.0) and the None NaN ("nan").
    html = tables.show([{"design": "granular", "turns": 3}, {"design": "focused", "turns": None}]).to_html()
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert cells == ["granular", "3", "focused", "–"]


def test_headers_are_aligned_like_their_columns_and_identifiers_never_break():
    html = tables.show([{"orderId": "ORD-1001", "tool calls (count)": 4, "note": "two words"}]).to_html()
    table_id = re.search(r'<table id="(T_\w+)"', html).group(1)
    assert f"#{table_id} th.col_heading {{\n  text-align: left;" in html  # words: header on the left
    assert f"#{table_id} th.col_heading.col1 {{\n  text-align: right;" in html  # the count's header on the right
    assert "th.col_heading.col0 {" not in html and "th.col_heading.col2 {" not in html
    styles = dict(re.findall(r"#(T_\w+_row0_col\d)[^{]*\{([^}]*)\}", html))
    nowrap = [k for k, v in styles.items() if "nowrap" in v]
    assert nowrap == [f"{table_id}_row0_col0"]  # ORD-1001 stays whole; "two words" may wrap


def test_a_table_has_no_index_and_headers_in_words():
    html = tables.show([{"orderId": "ORD-1004", "totalInput": 420000, "inputs": [1, 2]}]).to_html()
    assert "order" in html and "session input (tokens, modelled)" in html
    assert "input of each model call (tokens, modelled)" in html
    assert "420,000" in html and "1 · 2" in html
    assert 'class="row_heading' not in html  # no index column
    assert (
        tables.header("toolCalls") == "tool calls (count, measured)" and tables.header("someNewKey") == "some new key"
    )
    assert tables.header("USD per 1,000") == "USD per 1,000"


def test_annotations_read_as_words():
    assert tables.annotations_in_words({"openWorldHint": False, "readOnlyHint": True}) == "read-only, closed-world"
    assert tables.annotations_in_words({}) == "none"
    result = {
        "tools": {
            "granular": [
                {
                    "name": "get_order",
                    "inputSchema": {"properties": {"orderId": {"type": "string"}}, "required": ["orderId"]},
                    "annotations": {"openWorldHint": False, "readOnlyHint": True},
                    "description": "Get one order.",
                }
            ]
        }
    }
    html = tables.tools_table(result).to_html()
    assert "read-only, closed-world" in html and "Hint" not in html
