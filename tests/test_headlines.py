"""Headline figures that stand beside the published ones: the price at the study's own tokens, what a price's tokens
are for another provider's model, and why two tables give different totals for the same case."""

from wismo.accounting.cost import caching, prices
from wismo.reports import calibration as shown
from wismo.reports.context_price import published_price
from wismo.reports.price_tables import tokens_priced
from wismo.studies.declaration import article


def test_the_published_conversation_is_priced_at_its_own_tokens():
    price = prices.lookup("gpt-4.1-mini")
    at = published_price(article(), price, caching.AUTOMATIC, 1000)
    # 3,442 input (718 + 1,005 + 1,719) and 227 output (3,669 - 3,442), as published.
    assert (at["design"], at["case"], at["input"], at["output"]) == ("granular", "ORD-1004", 3442, 227)
    expected = (3442 * price.input + 227 * price.output) / 1_000_000 * 1000
    assert abs(at["dollars"] - expected) < 1e-6 and round(at["dollars"], 2) == 1.74
    assert at["publishedModel"] == "gpt-4.1-mini-2025-04-14" and "derived from published" in at["kind"]


def test_a_model_of_another_provider_is_priced_on_estimates_said_so():
    assert tokens_priced("anthropic", "o200k_base").startswith("o200k_base estimates: Anthropic's own tokenizer")
    assert "the model's own encoding" in tokens_priced("openai", "o200k_base")


def test_the_framing_share_says_why_its_totals_are_not_section_3s():
    result = {
        "study": {"key": "orderId"},
        "focusCase": "ORD-1004",
        "calibrationSummary": {"instructionsTokensSolved": 368, "ourInstructionsTokens": 199},
        "ourServers": [
            {"design": "granular", "orderId": "ORD-1004", "total": 2259, "modelCalls": 3},
            {"design": "focused", "orderId": "ORD-1004", "total": 1129, "modelCalls": 2},
        ],
        "framingShare": [
            {"design": "granular", "input, bare text": 2766},
            {"design": "focused", "input, bare text": 1467},
        ],
    }
    said = shown.framing_share_statement(result)
    assert "granular 2,766 against 2,259 (+507: +169 × 3 requests)" in said
    assert "focused 1,467 against 1,129 (+338: +169 × 2 requests)" in said
    assert "request-1 residual (368 tokens" in said
    result["framingShare"][1]["input, bare text"] = 1500  # a difference the residual does not explain is not hidden
    assert "(+371: of which +338 is +169 × 2)" in shown.framing_share_statement(result)
    del result["calibrationSummary"]
    assert shown.framing_share_statement(result) == ""
