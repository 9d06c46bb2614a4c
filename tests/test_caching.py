"""Prompt caching on the cumulative-context model, pinned on hand-checked examples."""

import pytest

from wismo.accounting import cost
from wismo.accounting.cost import caching

OPENAI = caching.AUTOMATIC  # 1,024-token threshold, 128-token increments, writes not billed
ANTHROPIC = caching.EXPLICIT  # 1,024-token threshold, any length, writes billed at a premium


def test_a_session_under_the_threshold_caches_nothing():
    # Our granular ORD-1004 conversation, and the article's published requests: no prefix reaches 1,024 tokens.
    for inputs in ((549, 678, 1032), (718, 1005, 1719)):
        calls = caching.apply(inputs, OPENAI)
        assert [c.read for c in calls] == [0, 0, 0]
        assert [c.uncached for c in calls] == list(inputs)
        assert caching.first_hit(calls) is None
    # Explicit breakpoints under the threshold write nothing either.
    assert [(c.read, c.write) for c in caching.apply((500, 900), ANTHROPIC)] == [(0, 0), (0, 0)]


def test_over_the_threshold_only_whole_increments_are_read():
    # Call 2 reads call 1's 1,100 tokens rounded down: 1,024 + 0 x 128; call 3 reads 1,300 as 1,024 + 2 x 128 = 1,280.
    calls = caching.apply((1100, 1300, 2000), OPENAI)
    assert [c.read for c in calls] == [0, 1024, 1280]
    assert [c.write for c in calls] == [0, 0, 0]
    assert [c.uncached for c in calls] == [1100, 276, 720]
    assert caching.first_hit(calls) == 2
    # The case study's broad session: call 2 reads 6,000 as 1,024 + 38 x 128 = 5,888 (4,976 / 128 = 38.875).
    broad = caching.apply(cost.uniform(6000, 18000, 3).inputs, OPENAI)
    assert [c.read for c in broad] == [0, 5888, 23936]
    assert OPENAI.cacheable(1023) == 0 and OPENAI.cacheable(1024) == 1024 and OPENAI.cacheable(1151) == 1024
    assert OPENAI.cacheable(1152) == 1152


def test_explicit_breakpoints_write_then_read():
    # Each call writes what it adds past the prefix it read; the next call reads the previous whole input.
    calls = caching.apply((6000, 24000, 42000), ANTHROPIC)
    assert [(c.read, c.write, c.uncached) for c in calls] == [(0, 6000, 0), (6000, 18000, 0), (24000, 18000, 0)]
    # Every prefix a miss: nothing is read and every call pays for writing its whole prefix again.
    missed = caching.apply((6000, 24000, 42000), ANTHROPIC, hits=False)
    assert [(c.read, c.write) for c in missed] == [(0, 6000), (0, 24000), (0, 42000)]
    # Without a policy nothing is cached.
    assert caching.totals(caching.apply((6000, 24000), None)) == {
        "input": 30000,
        "read": 0,
        "write": 0,
        "uncached": 30000,
    }


def test_threshold_and_granularity_are_parameters():
    policy = OPENAI.with_limits(threshold=512, granularity=64)
    assert (policy.threshold, policy.granularity, policy.source) == (512, 64, "parameters")
    assert [c.read for c in caching.apply((549, 678, 1032), policy)] == [0, 512, 640]
    assert OPENAI.with_limits() == OPENAI
    with pytest.raises(ValueError, match="at least 1 token"):
        OPENAI.with_limits(granularity=0)
    assert caching.from_dict(policy.as_dict()) == policy


def test_each_provider_has_its_documented_rule():
    assert caching.for_model("openai", "gpt-4.1-mini") is OPENAI
    assert caching.for_model("anthropic", "claude-sonnet-4-5") is ANTHROPIC
    assert caching.for_model("anthropic", "claude-haiku-4-5").threshold == 4096
    assert "assumed" in caching.for_model("parameters", "my-model").name
    assert caching.longest_prefix((549, 678, 1032)) == 678 and caching.longest_prefix((355,)) == 0
