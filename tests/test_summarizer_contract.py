"""The Summarizer contract: every bundled summarizer meets it, and a third-party one is read through
an adapter whose unknown cost stays unknown (None), never silently zero."""

from __future__ import annotations

from inspector.engine.summarizers import Summarizer, as_summarizer, price_usage
from inspector.engine.summarizers.drop import DropSummarizer
from inspector.engine.summarizers.llm import LLMSummarizer
from inspector.engine.summarizers.standin import StandInSummarizer


def test_bundled_summarizers_meet_the_contract_without_an_adapter() -> None:
    for summ in (DropSummarizer(), LLMSummarizer(model="gpt-4o"), StandInSummarizer()):
        assert isinstance(summ, Summarizer)
        assert as_summarizer(summ) is summ
        assert summ.cost([]) == 0.0  # no calls logged costs nothing


def test_llm_summarizer_prices_usage_at_its_model_rates() -> None:
    from inspector.engine.limits import litellm_model_info

    info = litellm_model_info("gpt-4o") or {}
    entries = [{"prompt_tokens": 1000, "completion_tokens": 100}]
    expected = 1000 * info["input_cost_per_token"] + 100 * info["output_cost_per_token"]
    assert LLMSummarizer(model="gpt-4o").cost(entries) == round(expected, 10)
    assert price_usage("no-such-model-xyz", entries) is None


def test_a_third_party_callable_is_adapted_and_its_cost_is_unknown() -> None:
    def shorten(messages: list[dict[str, object]]) -> str:
        return "summary of %d" % len(messages)

    summ = as_summarizer(shorten)
    assert summ.label == "function"
    assert summ.summarize([{"role": "user", "content": "hi"}]) == "summary of 1"
    assert summ.cost([{"prompt_tokens": 5}]) is None
