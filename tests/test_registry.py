"""Plugin registry: names, aliases, URN suffixes, third-party registration and entry points, ref imports."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from inspector.engine.assembler import ContextEngine
from inspector.plugins import PluginLookupError, PluginSpec, Registry, BUILTIN_SPECS, default_registry
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
