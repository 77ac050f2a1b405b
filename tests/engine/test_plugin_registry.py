"""Plugin registry: names, aliases, URN suffixes, third-party registration and entry points, ref imports."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.engine import ContextEngine
from inspector.plugins import ENTRY_POINT_GROUP, PluginLookupError, PluginSpec, Registry, BUILTIN_SPECS, default_registry
from inspector.manifest import settings_from_dict


@pytest.mark.parametrize(("slot", "name", "canonical"), [
    ("context_manager", "summarising", "summarising"),
    ("context_manager", "Summarizing", "summarising"),  # alias, any case
    ("context_manager", "sliding_window", "sliding-window"),
    ("context_manager", "full-history", "stack"),
    ("context_manager", "full_history", "stack"),
    ("context_manager", "mas.cm.stack", "stack"),  # exact URN
    ("assembler", "context-assembler", "assembler"),
    ("assembler", "ctx-assembler", "assembler"),
    ("summarizer", "mas.summarizer.drop", "drop"),
])
def test_names_aliases_and_urns(slot: str, name: str, canonical: str) -> None:
    assert default_registry().resolve(slot, name).name == canonical  # type: ignore[arg-type]


def test_urn_suffix_matching_without_an_alias() -> None:
    reg = Registry([PluginSpec("context_manager", "my-window", "acme.cm.my_window", "x:y")])
    assert reg.find("context_manager", "my_window").name == "my-window"
    assert reg.find("context_manager", "MY-WINDOW").name == "my-window"


def test_unknown_name_names_the_field() -> None:
    with pytest.raises(PluginLookupError, match=r"spec\.context_manager.*nope"):
        default_registry().resolve("context_manager", "nope", field_path="spec.context_manager")


class Keep2:
    """A third-party manager: keeps the last two history rows."""

    name = "keep-two"

    def __init__(self) -> None:
        self.last_decision = None

    def manage_history(self, past, hint):  # noqa: ANN001, ANN201
        from inspector.engine.managers.base import CMDecision

        self.last_decision = CMDecision("window-slid", kept_turns=1)
        return list(past[-2:])


def test_third_party_plugin_registers_without_editing_the_package() -> None:
    reg = Registry(BUILTIN_SPECS)
    reg.register(PluginSpec("context_manager", "keep-two", "acme.cm.keep_two", Keep2))
    s = settings_from_dict({"kind": "Agent", "spec": {}}).settings
    from dataclasses import replace

    s = replace(s, context_manager=replace(s.context_manager, type="keep-two", urn="acme.cm.keep_two", params={}))
    e = ContextEngine(s, counter="estimate", registry=reg)
    for i in range(3):
        e.user(f"q{i}")
        e.record({"role": "assistant", "content": f"a{i}"})
        e.commit()
    e.user("now")
    assert [m["content"] for m in e.assemble().messages] == ["q2", "a2", "now"]


def test_entry_point_plugins_are_discovered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "acme_ctx.py"
    pkg.write_text(textwrap.dedent("""
        from inspector.plugins import PluginSpec
        PLUGINS = [PluginSpec("context_manager", "acme-window", "acme.cm.acme_window",
                              "inspector.engine.managers.sliding_window:SlidingWindowConversation")]
    """))
    dist = tmp_path / "acme_ctx-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-ctx\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[context_inspector.plugins]\nacme = acme_ctx:PLUGINS\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry(BUILTIN_SPECS)
    assert reg.find("context_manager", "acme-window") is not None
    assert reg.find("context_manager", "acme_window").urn == "acme.cm.acme_window"


def test_ref_imports_need_an_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sneaky_cm.py").write_text("import sys\nsys.modules[__name__].IMPORTED = True\nclass CM: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry(BUILTIN_SPECS)
    with pytest.raises(PluginLookupError, match="allow_imports"):
        reg.resolve_ref("context_manager", "sneaky_cm:CM")
    assert "sneaky_cm" not in sys.modules
    spec = reg.resolve_ref("context_manager", "sneaky_cm:CM", allow_imports=["sneaky_cm"])
    assert spec.load().__name__ == "CM" and "sneaky_cm" in sys.modules


_ACME = '''
from typing import Any

from inspector.engine.tokens import EstimateCounter
from inspector.plugins import PluginSpec
from inspector.transcripts.model import ConversationInfo, Transcript


class Lines:
    """A throw-away importer: one user message per line of plain text starting with '>'."""

    NAME = "quoted-lines"

    @staticmethod
    def sniff(obj_or_text: Any, name: str) -> bool:
        return isinstance(obj_or_text, str) and obj_or_text.startswith(">")

    @staticmethod
    def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
        lines = [ln[1:].strip() for ln in obj_or_text.splitlines() if ln.startswith(">")]
        return Transcript(format="quoted-lines", path=path, messages=[{"role": "user", "content": ln} for ln in lines],
                          origins=[f"line {i + 1}" for i in range(len(lines))], tools=None, model=None, usage={},
                          irregularities=[], conversations=[ConversationInfo(0, name, len(lines), len(lines))])

    @staticmethod
    def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
        return Lines.parse(obj_or_text, name=name).conversations


class Flat(EstimateCounter):
    """A throw-away counter: every message is 100 tokens, whatever it holds."""

    name = "flat"

    def total(self, units: int, n: int) -> int:
        return 100 * n


PLUGINS = [PluginSpec("importer", "quoted-lines", "acme.importer.quoted_lines", "acme_formats:Lines",
                      meta={"before": "openai"}),
           PluginSpec("counter", "flat", "acme.counter.flat", "acme_formats:Flat")]
'''


@pytest.fixture
def acme_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process-wide registry as an installed package ``acme-formats`` with an importer and a counter
    under the ``context_inspector.plugins`` entry point would make it (an EntryPoint built here, nothing
    installed); the built-ins alone again afterwards."""
    import importlib.metadata

    from inspector.transcripts import detect

    (tmp_path / "acme_formats.py").write_text(_ACME)
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = importlib.metadata.EntryPoint("acme", "acme_formats:PLUGINS", ENTRY_POINT_GROUP)
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: [ep] if kw.get("group") == ENTRY_POINT_GROUP else real(**kw))
    monkeypatch.setattr(detect, "_registry", {})  # detection order is rebuilt from the fresh registry
    default_registry.cache_clear()
    yield
    default_registry.cache_clear()


def test_an_entry_point_importer_is_asked_before_the_catch_all(acme_entry_point: None) -> None:
    from inspector.transcripts import detect_format, list_formats

    assert list_formats()[-3:] == ["anthropic", "quoted-lines", "openai"]  # meta["before"] places it
    assert list_formats()[:2] == ["tau-bench", "tau2-bench"]  # the built-ins keep their order
    assert detect_format("> hello\n> again") == "quoted-lines"


def test_an_entry_point_counter_is_a_counter_choice(acme_entry_point: None, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from inspector.cli import main
    from inspector.engine.tokens import make_counter

    assert make_counter("flat").total(7, 3) == 300
    chat = tmp_path / "chat.txt"
    chat.write_text("> hello\n> again\n")
    assert main(["replay", str(chat), "--counter", "flat", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["transcript"]["format"] == "quoted-lines" and out["settings"]["counter"] == "flat"
    (pending,) = out["frames"]  # the call that would follow the last line: "hello" as history, "again" as the user
    assert (pending["bands"]["history"], pending["bands"]["user"], pending["payload_tokens"]) == (100, 100, 200)
