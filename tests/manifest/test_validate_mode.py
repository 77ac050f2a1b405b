"""Validate mode: every error names its field path and YAML line, all errors are collected in one
pass, docs/design.md Q2 (deprecated keys warn) and Q9 (params the chosen manager does not accept fail),
and the assemble-mode fallbacks for the same inputs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from inspector.manifest import Issue, ManifestError, load_manifest_text, settings_from_dict


HERE = Path(__file__).parent


def validate(text: str) -> tuple[list[Issue], list[Issue]]:
    try:
        loaded = load_manifest_text(textwrap.dedent(text), file="m.yaml", mode="validate", base_dir=HERE)
    except ManifestError as exc:
        return exc.issues, exc.warnings
    return [], list(loaded.warnings)


# Each row: a manifest, then the single error expected as (field path, line, message fragment).
ERRORS = [
    pytest.param("""\
        spec:
          context_manager:
            type: stack
            params:
              keep_turns: 3
        """, ("spec.context_manager.params.keep_turns", 5, "not a parameter of the stack"), id="Q9-keep_turns-on-stack"),
    pytest.param("""\
        spec:
          context_manager:
            type: sliding-window
            params: {max_messages: 3}
        """, ("spec.context_manager.params.max_messages", 4, "accepts: keep_turns, max_turns, window_size"),
        id="Q9-max_messages-on-sliding-window"),
    pytest.param("""\
        spec:
          context_manager:
            type: stack
            params: {summarizer: drop}
        """, ("spec.context_manager.params.summarizer", 4, "not a parameter"), id="Q9-summarizer-on-stack"),
    pytest.param("""\
        spec:
          context_manager:
            params: {token_budget: 9000}
        """, ("spec.context_manager.params.token_budget", 3, "params.trimmer.max_tokens"),
        id="Q9-legacy-flat-token_budget-hints-at-trimmer"),
    pytest.param("""\
        spec:
          context_manager:
            type: summarising
            params:
              keep_turns: 0
        """, ("spec.context_manager.params.keep_turns", 5, "greater than or equal to 1"), id="keep_turns>=1"),
    pytest.param("""\
        spec:
          context_manager: {type: summarising, params: {keep_turns: true}}
        """, ("spec.context_manager.params.keep_turns", 2, "valid integer"), id="keep_turns-bool-is-not-int"),
    pytest.param("""\
        spec:
          context_manager: {type: stack, params: {max_messages: -4}}
        """, ("spec.context_manager.params.max_messages", 2, "greater than or equal to 1"), id="max_messages>=1"),
    pytest.param("""\
        spec:
          context_manager:
            params:
              hysteresis_ratio: lots
        """, ("spec.context_manager.params.hysteresis_ratio", 4, "valid number"), id="hysteresis-number"),
    pytest.param("""\
        spec:
          context_manager:
            params:
              summary_threshold: -1
        """, ("spec.context_manager.params.summary_threshold", 4, "greater than or equal to 0"),
        id="summary_threshold>=0"),
    pytest.param("""\
        spec:
          context_manager:
            type: summarising
            skills: [a]
        """, ("spec.context_manager.skills", 4, "unknown key"), id="unknown-key-in-binding"),
    pytest.param("""\
        spec:
          context_manager:
            params:
              trimmer:
                max_tokens: 8000
                budget: 1
        """, ("spec.context_manager.params.trimmer.budget", 6, "unknown key"), id="unknown-trimmer-key"),
    pytest.param("""\
        spec:
          context_manager:
            params:
              trimmer: {max_tokens: lots}
        """, ("spec.context_manager.params.trimmer.max_tokens", 4, "valid integer"), id="trimmer-non-numeric"),
    pytest.param("""\
        spec:
          context_manager:
            params:
              trimmer:
                reserve_tokens: -10
        """, ("spec.context_manager.params.trimmer.reserve_tokens", 5, ">= 0"), id="trimmer-negative-reserve"),
    pytest.param("""\
        spec:
          working_memory:
            persistent: yes please
        """, ("spec.working_memory.persistent", 3, "valid boolean"), id="persistent-bool"),
    pytest.param("""\
        spec:
          working_memory:
            keep: 3
        """, ("spec.working_memory.keep", 3, "unknown key"), id="unknown-working_memory-key"),
    pytest.param("""\
        spec:
          working_memory:
            compaction:
              strategy: summarize
              keep_turns: 0
        """, ("spec.working_memory.compaction.keep_turns", 5, "greater than or equal to 1"),
        id="compaction-keep_turns"),
    pytest.param("""\
        spec:
          working_memory:
            compaction: {strategy: keep_recent, max_message: 5}
        """, ("spec.working_memory.compaction.max_message", 3, "unknown key"), id="unknown-compaction-key"),
    pytest.param("""\
        spec:
          models:
            - id: main
              model: gpt-4o
            - id: summarizer
              context_window: big
        """, ("spec.models[1].context_window", 6, "valid integer"), id="models-context_window-type"),
    pytest.param("""\
        spec:
          models:
            - model: gpt-4o
              max_tokens: 0
        """, ("spec.models[0].max_tokens", 4, "greater than or equal to 1"), id="models-max_tokens"),
    pytest.param("""\
        spec:
          models:
            - {id: main, model: a}
            - {id: main, model: b}
        """, ("spec.models[1].id", 4, "duplicate model id"), id="models-duplicate-id"),
    pytest.param("""\
        spec:
          tools:
            - type: function
              function:
                description: no name
        """, ("spec.tools[0].function.name", 4, "required"), id="tool-without-name"),
    pytest.param("""\
        spec:
          skills:
            - name: refunds
              activated: sometimes
        """, ("spec.skills[0].activated", 4, "valid boolean"), id="skill-activated-bool"),
    pytest.param("""\
        spec:
          system_prompt: [not, text]
        """, ("spec.system_prompt", 2, "must be a string"), id="system_prompt-string"),
    pytest.param("""\
        spec:
          context:
            policy: ./missing-policy.md
        """, ("spec.context.policy", 3, "not found"), id="context-dot-slash-missing-file"),
    pytest.param("""\
        spec:
          context_manager:
            params:
              summarizer:
                type: llm
                params: {temperature: 0}
        """, ("spec.context_manager.params.summarizer.params.temperature", 6, "not a parameter of the llm"),
        id="summarizer-unknown-param"),
    pytest.param("""\
        spec:
          context_manager:
            params:
              summarizer: {type: drop, model: gpt-4o-mini}
        """, ("spec.context_manager.params.summarizer.model", 4, "takes no model"), id="drop-has-no-model"),
    pytest.param("""\
        spec:
          infra:
            models:
              mappings: {a: b, b: a}
        """, ("spec.infra.models.mappings.a", 4, "cycles"), id="infra-mapping-cycle"),
    pytest.param("""\
        spec:
          infra:
            models:
              generation:
                pricing: {input_per_million_tokens: -1}
        """, ("spec.infra.models.generation.pricing.input_per_million_tokens", 5, "greater than or equal to 0"),
        id="infra-pricing"),
    pytest.param("""\
        spec:
          assembler:
            params: {emit_segments: maybe}
        """, ("spec.assembler.params.emit_segments", 3, "valid boolean"), id="assembler-param-type"),
    pytest.param("""\
        spec:
          assembler:
            params: {keep_turns: 3}
        """, ("spec.assembler.params.keep_turns", 3, "not a parameter of the assembler"), id="assembler-Q9"),
    pytest.param("""\
        spec: [1, 2]
        """, ("spec", 1, "must be a mapping"), id="spec-not-mapping"),
    pytest.param("""\
        spec:
          context_manager: stack
          context_manager: sliding-window
        """, ("spec.context_manager", 3, "duplicate key 'context_manager' (first defined on line 2)"),
        id="duplicate-key"),
]


@pytest.mark.parametrize(("text", "expected"), ERRORS)
def test_validate_error_names_field_path_and_line(text: str, expected: tuple[str, int, str]) -> None:
    errors, _ = validate(text)
    path, line, fragment = expected
    assert [(e.path, e.line) for e in errors] == [(path, line)], [str(e) for e in errors]
    assert fragment in errors[0].message
    assert str(errors[0]) == f"m.yaml:{line}: {path}: {errors[0].message}"


def test_validate_collects_every_error_in_one_pass_sorted_by_line() -> None:
    errors, _ = validate("""\
        spec:
          models:
            - {model: gpt-4o, max_tokens: -1}
          context_manager:
            type: stack
            params:
              keep_turns: 2
              max_messages: 0
              trimmer: {max_tokens: x}
          working_memory: {persistent: 3}
        """)
    assert [(e.path, e.line) for e in errors] == [
        ("spec.models[0].max_tokens", 3),
        ("spec.context_manager.params.keep_turns", 7),
        ("spec.context_manager.params.max_messages", 8),
        ("spec.context_manager.params.trimmer.max_tokens", 9),
        ("spec.working_memory.persistent", 10),
    ]


def test_working_memory_messages_is_a_deprecation_warning_not_an_error() -> None:
    text = """\
        spec:
          context_manager:
            type: summarising
            params:
              working_memory_messages: 20
              max_in_turn_messages: 10
        """
    errors, warnings = validate(text)
    assert errors == []
    assert [(w.path, w.line, w.severity) for w in warnings] == [
        ("spec.context_manager.params.working_memory_messages", 5, "warning"),
        ("spec.context_manager.params.max_in_turn_messages", 6, "warning"),
    ]
    settings = load_manifest_text(textwrap.dedent(text)).settings
    assert settings.deprecated == (
        "spec.context_manager.params.working_memory_messages is accepted and ignored (deprecated)",
        "spec.context_manager.params.max_in_turn_messages is accepted and ignored (deprecated)",
    )
    assert settings.warnings == ()  # deprecations are listed once, in `deprecated`
    assert dict(settings.context_manager.params) == {}  # stripped before the constructor


def test_a_param_the_manager_does_not_take_is_an_error_in_assemble_mode_too() -> None:
    with pytest.raises(ManifestError, match=r"spec\.context_manager\.params\.keep_turns"):
        settings_from_dict({"spec": {"context_manager": {"type": "stack", "params": {"keep_turns": 3}}}})


@pytest.mark.parametrize(
    ("text", "warning_path"),
    [
        ("spec:\n  budget: {max_llm_calls: 3}\n", "spec.budget"),  # unknown spec keys: warnings
        ("spec: {}\nstatus: {}\n", "status"),
        ("spec:\n  context_manager: {params: {hysteresis_ratio: 1.5}}\n",
         "spec.context_manager.params.hysteresis_ratio"),
        ("spec:\n  context_manager: {params: {trimmer: {safety_margin_ratio: 0.9}}}\n",
         "spec.context_manager.params.trimmer.safety_margin_ratio"),
        ("spec:\n  context_manager: stack\n  working_memory: {compaction: {strategy: summarize}}\n",
         "spec.working_memory.compaction"),
        ("spec:\n  models: [{model: gpt-4o, stream: true}]\n", "spec.models[0].stream"),
        ("spec:\n  context_manager: {type: summarising, memory: {}}\n", "spec.context_manager.memory"),
    ],
)
def test_validate_warnings_do_not_fail(text: str, warning_path: str) -> None:
    errors, warnings = validate(text)
    assert errors == []
    assert warning_path in [w.path for w in warnings]


# --- the same inputs in assemble mode ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("trimmer", "expected"),
    [
        ({}, (None, None, 0.1)),
        ({"max_tokens": 12000, "reserve_tokens": 512}, (12000, 512, 0.1)),
        ({"token_budget": 9000}, (9000, None, 0.1)),  # alias
        ({"max_tokens": 8000, "token_budget": 9000}, (8000, None, 0.1)),  # max_tokens wins
        ({"max_tokens": "lots", "reserve_tokens": "some"}, (None, None, 0.1)),  # non-numeric -> auto, silently
        ({"max_tokens": 0}, (None, None, 0.1)),  # not a valid ceiling -> auto
        ({"reserve_tokens": -50}, (None, 0, 0.1)),  # floored at 0
        ({"safety_margin_ratio": 0.9}, (None, None, 0.5)),  # clamped
        ({"safety_margin_ratio": -1}, (None, None, 0.0)),
        ({"safety_margin_ratio": ".nan"}, (None, None, 0.1)),
        ("not-a-mapping", (None, None, 0.1)),
    ],
)
def test_trimmer_settings_in_assemble_mode(trimmer: object, expected: tuple) -> None:
    loaded = settings_from_dict({"spec": {"context_manager": {"params": {"trimmer": trimmer}}}})
    t = loaded.settings.trimmer
    assert (t.max_tokens, t.reserve_tokens, t.safety_margin_ratio) == expected
    assert not [w for w in loaded.warnings if "trimmer" in w.path]  # the runtime is silent here


def test_assemble_mode_drops_only_the_invalid_field_of_a_model_row() -> None:
    loaded = settings_from_dict({"spec": {"models": [{"model": "gpt-4o", "max_tokens": "lots",
                                                      "context_window": 6000}]}})
    row = loaded.settings.primary_model()
    assert row is not None and (row.model, row.max_tokens, row.context_window) == ("gpt-4o", None, 6000)
    assert [w.path for w in loaded.warnings] == ["spec.models[0].max_tokens"]


def test_lines_point_to_nearest_written_ancestor_for_missing_fields() -> None:
    errors, _ = validate("""\
        spec:
          skills:
            - description: no name here
        """)
    assert [(e.path, e.line) for e in errors] == [("spec.skills[0].name", 3)]


def test_persistent_false_is_a_located_deprecation_because_it_changes_nothing_here() -> None:
    """README "The manifest surface": one replay is one conversation, so ``persistent`` cannot clear
    history between delegate calls; ``false`` is accepted (reference manifests load) and said to do nothing."""
    text = """\
        spec:
          working_memory:
            persistent: false
        """
    errors, warnings = validate(text)
    assert errors == []
    assert [(w.path, w.line) for w in warnings] == [("spec.working_memory.persistent", 3)]
    assert "no effect" in warnings[0].message
    settings = load_manifest_text(textwrap.dedent(text)).settings
    assert settings.deprecated == ("spec.working_memory.persistent is accepted and ignored (deprecated)",)
    assert validate("spec:\n  working_memory: {persistent: true}\n") == ([], [])
