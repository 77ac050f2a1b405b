"""The Summarizer contract: every bundled summarizer meets it, and a third-party one is read through
an adapter whose unknown cost stays unknown (None), never silently zero."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from inspector.engine.summarizers import Summarizer, as_summarizer, price_usage
from inspector.engine.summarizers.drop import DropSummarizer
from inspector.engine.summarizers.llm import LLMSummarizer
from inspector.engine.summarizers.standin import StandInSummarizer
from inspector.plugins import PluginSpec, default_registry


def _built(spec: PluginSpec) -> Callable[[], Any]:
    return lambda: spec.load()()  # as a manifest naming it with no params builds it


SUMMARIZERS = [pytest.param(_built(spec), id=spec.name) for spec in default_registry().specs("summarizer")] + \
    [pytest.param(StandInSummarizer, id="stand-in")]  # the offline stand-in is chosen by policy, not by name


@pytest.mark.parametrize("make", SUMMARIZERS)
def test_bundled_summarizers_meet_the_contract_without_an_adapter(make: Callable[[], Any]) -> None:
    """Every summarizer of the registry, built with its defaults, and the offline stand-in."""
    summ = make()
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


# -- no swallowed keywords: an unknown keyword is a TypeError in every plugin constructor ---
def test_an_unknown_keyword_is_a_type_error_not_a_summarizer_without_a_model() -> None:
    """``LLMSummarizer(engine=x)`` (the reference's name for ``llm``) once built a summarizer with no
    model and no error; every bundled summarizer now refuses a keyword it does not take."""
    import pytest

    for build in (lambda: LLMSummarizer(engine=object()), lambda: DropSummarizer(model="gpt-4o"),
                  lambda: StandInSummarizer(engine=object()), lambda: StandInSummarizer(max_char=10)):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            build()


def test_every_registered_plugin_constructor_refuses_an_unknown_keyword() -> None:
    import pytest

    from inspector.plugins import default_registry

    reg = default_registry()
    specs = [s for slot in ("assembler", "context_manager", "summarizer") for s in reg.specs(slot) if s.builtin]
    assert len(specs) == 10  # assembler, summarising, sliding-window, stack, clear-tool-results, observation-masking, auto-compact, condenser, llm, drop
    for spec in specs:
        with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_keyword'"):
            spec.load()(no_such_keyword=1)


def test_the_llm_engine_still_passes_extra_keywords_through_to_litellm(monkeypatch) -> None:  # noqa: ANN001
    """The one deliberate pass-through: ``LLMEngine.complete(**kwargs)`` forwards what it does not
    know to the provider call."""
    from types import SimpleNamespace

    import inspector.offline as offline
    from inspector.engine.llm import LLMEngine

    seen: dict[str, object] = {}

    def completion(**kwargs: object) -> object:
        seen.update(kwargs)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="ok"))], usage=None)

    monkeypatch.setattr(offline, "litellm", lambda: SimpleNamespace(completion=completion))
    LLMEngine(model="gpt-4o").complete([{"role": "user", "content": "hi"}], temperature=0.25, seed=7)
    assert seen["temperature"] == 0.25 and seen["seed"] == 7 and seen["model"] == "gpt-4o"
