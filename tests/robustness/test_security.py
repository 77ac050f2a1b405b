"""Security: manifests never import or run code unless the caller allow-lists it, manifest file
references stay inside the manifest's folder, and secrets never leave the process unmasked.

Guards: a manifest from another team (or an upload) that imports a module of its choosing just by
being read, validated or replayed; an allow-list that a look-alike module name slips past; YAML
tags that build Python objects; ``context: {x: {ref: ../../etc/passwd}}`` pulling a file into a
displayed prompt; an API key, bearer token or env-style secret printed by any CLI command, written
to a file, or shown in a report table.

The import checks use a module written into ``tmp_path`` whose import leaves a marker file, so
"not imported" is observed directly (in-process: not in ``sys.modules``; CLI: no marker).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

from inspector.engine import ContextEngine
from inspector.engine.llm import LLMEngine
from inspector.plugins import PluginLookupError
from inspector.manifest import ManifestError, ManifestReadError, load_manifest, load_manifest_text, settings_from_dict
from inspector.replay import replay
from inspector.report.tables import compare_table, frames_table, not_sent_table, payload_table, repairs_table
from inspector.transcripts import parse_transcript

EXE = Path(sys.executable).with_name("context-inspector")

PLUGIN_SOURCE = '''
import pathlib
pathlib.Path({marker!r}).write_text("imported")

from inspector.engine import ContextAssembler
from inspector.engine.managers.stack import StackConversation


class CM(StackConversation):
    name = "probe"


class Asm(ContextAssembler):
    pass


class Summ:
    label = "probe-summarizer"

    def __init__(self, **kw):
        pass

    def summarize(self, msgs):
        return "probe summary"


def boom(*args, **kwargs):
    pathlib.Path({marker!r}).write_text("called")
'''


class Plugin:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.name = f"ci_probe_{uuid.uuid4().hex[:10]}"
        self.marker = folder / f"{self.name}.imported"
        (folder / f"{self.name}.py").write_text(PLUGIN_SOURCE.format(marker=str(self.marker)))

    def imported(self) -> bool:
        return self.name in sys.modules or self.marker.exists()


@pytest.fixture()
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    p = Plugin(folder)
    assert not p.imported()
    yield p
    sys.modules.pop(p.name, None)


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, **(env or {})})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def agent(**spec: Any) -> dict[str, Any]:
    return {"kind": "Agent", "spec": spec}


CHAT = parse_transcript(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                                    {"role": "user", "content": "again"}]), name="chat.json")


# --- code never runs unless allow-listed --------------------------------------------------------

def placements(mod: str) -> dict[str, dict[str, Any]]:
    return {
        "context_manager.ref": {"context_manager": {"ref": f"{mod}:CM"}},
        "context_manager.type": {"context_manager": {"type": f"{mod}:CM"}},
        "context_manager-string": {"context_manager": f"{mod}:CM"},
        "assembler.ref": {"assembler": {"ref": f"{mod}:Asm"}},
        "assembler-string": {"assembler": f"{mod}:Asm"},
        "summarizer.ref": {"context_manager": {"type": "summarising", "params": {"summarizer": {"ref": f"{mod}:Summ"}}}},
        "summarizer-string": {"context_manager": {"type": "summarising", "params": {"summarizer": f"{mod}:Summ"}}},
        "compaction.strategy": {"working_memory": {"compaction": {"strategy": f"{mod}:CM"}}},
        "function-ref": {"context_manager": {"ref": f"{mod}:boom", "params": {"command": "touch pwned"}}},
    }


PLACEMENTS = list(placements("m"))
ENTRY_POINTS = {
    "load-validate": lambda doc: load_manifest_text(json.dumps(doc), mode="validate"),
    "load-assemble": lambda doc: load_manifest_text(json.dumps(doc), mode="assemble"),
    "settings_from_dict": lambda doc: settings_from_dict(doc),
    "replay": lambda doc: replay(doc, CHAT, counter="estimate"),
    "ContextEngine": lambda doc: ContextEngine(doc, counter="estimate"),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("where", PLACEMENTS)
def test_a_manifest_never_imports_code_by_itself(plugin: Plugin, where: str, entry: str) -> None:
    doc = agent(**placements(plugin.name)[where])
    with pytest.raises((ManifestError, PluginLookupError)) as info:
        ENTRY_POINTS[entry](doc)
    assert plugin.name in str(info.value)
    assert not plugin.imported()


LOOKALIKES = [[], ["other"], ["ci_probe"], ["ci_probe_"], ["{mod}.sub"], ["{MOD}"], [""], ["*"], [".{mod}"], ["{mod} "]]


@pytest.mark.parametrize("allow", LOOKALIKES, ids=lambda a: "+".join(a) or "none")
def test_only_the_exact_module_or_its_package_is_allowed(plugin: Plugin, allow: list[str]) -> None:
    allowed = [a.format(mod=plugin.name, MOD=plugin.name.upper()) for a in allow]
    doc = agent(context_manager={"ref": f"{plugin.name}:CM"})
    with pytest.raises(ManifestError, match="allow_imports"):
        settings_from_dict(doc, allow_imports=allowed)
    with pytest.raises((ManifestError, PluginLookupError)):
        replay(doc, CHAT, counter="estimate", allow_imports=allowed)
    assert not plugin.imported()


def test_a_settings_object_loaded_with_permission_does_not_carry_it(plugin: Plugin) -> None:
    loaded = settings_from_dict(agent(context_manager={"ref": f"{plugin.name}:CM"}), allow_imports=[plugin.name])
    assert not plugin.imported(), "reading a manifest never imports, even when allowed"
    with pytest.raises(PluginLookupError, match="allow_imports"):
        replay(loaded, CHAT, counter="estimate")  # the engine asks again
    assert not plugin.imported()


@pytest.mark.parametrize("where", ["context_manager.ref", "assembler.ref", "summarizer.ref"])
def test_an_allow_listed_ref_is_imported_and_used(plugin: Plugin, where: str) -> None:
    doc = agent(**placements(plugin.name)[where], models=[{"context_window": 4000, "max_tokens": 100}])
    if where == "summarizer.ref":
        doc["spec"]["context_manager"]["params"]["keep_turns"] = 1
    rows = []
    for i in range(6):
        rows += [{"role": "user", "content": f"question {i} " + "words " * 30}, {"role": "assistant", "content": "ok"}]
    tr = parse_transcript(json.dumps(rows), name="t.json")
    rp = replay(settings_from_dict(doc, allow_imports=[plugin.name]), tr, counter="estimate",
                allow_imports=[plugin.name])
    assert plugin.imported()
    if where == "context_manager.ref":
        assert rp.settings.context_manager.ref == f"{plugin.name}:CM"
        assert type(sys.modules[plugin.name].CM).__name__ == "ABCMeta"
    if where == "summarizer.ref":
        assert rp.summarizer_label == "probe-summarizer"
        assert any(f.summary_text == "probe summary" for f in rp.frames) or \
            any(c.action == "summarized" for c in rp.commits)


@pytest.mark.parametrize("ref", ["os:system", "subprocess:run", "builtins:exec", "importlib:import_module",
                                 "shutil:rmtree", "os.path:join"])
def test_stdlib_functions_are_refused_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ref: str) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(os, "system", lambda *a, **k: calls.append(a) or 0)
    doc = agent(context_manager={"ref": ref, "params": {"command": f"touch {tmp_path / 'pwned'}"}})
    for entry in ENTRY_POINTS.values():
        with pytest.raises((ManifestError, PluginLookupError), match="allow_imports"):
            entry(doc)
    assert calls == [] and not (tmp_path / "pwned").exists()


def test_the_cli_never_runs_os_system_from_a_manifest(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    manifest = tmp_path / "evil.yaml"
    manifest.write_text(f"kind: Agent\nspec:\n  context_manager:\n    ref: os:system\n"
                        f"    params: {{command: 'touch {pwned}'}}\n")
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps(CHAT.messages))
    for args in (["validate", str(manifest)], ["replay", str(manifest), str(transcript), "--counter", "estimate"],
                 ["compare", str(manifest), str(transcript), "--counter", "estimate", "--strategy", "a=stack"]):
        out = run(*args)
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        assert "allow" in (out.stdout + out.stderr)
    assert not pwned.exists()


@pytest.mark.parametrize("tag", ["!!python/object/apply:{mod}.boom []", "!!python/name:{mod}.CM ''",
                                 "!!python/module:{mod} ''", "!!python/object/new:{mod}.CM []",
                                 "!!python/object:{mod}.CM {{}}"])
def test_yaml_python_tags_never_import(plugin: Plugin, tag: str) -> None:
    text = f"kind: Agent\nspec:\n  context_manager: {tag.format(mod=plugin.name)}\n"
    for mode in ("validate", "assemble"):
        with pytest.raises(ManifestReadError) as info:
            load_manifest_text(text, file="m.yaml", mode=mode)
        assert info.value.issues[0].line == 3
    assert not plugin.imported()


def test_cli_allow_import_is_the_only_way_in(tmp_path: Path, plugin: Plugin) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"kind: Agent\nspec:\n  context_manager:\n    ref: {plugin.name}:CM\n    params: {{max_messages: 4}}\n")
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps(CHAT.messages))
    env = {"PYTHONPATH": str(plugin.folder)}
    replay_args = ["replay", str(manifest), str(transcript), "--counter", "estimate"]

    refused = run(*replay_args, env=env)
    assert refused.returncode == 1
    assert f"allow_imports=['{plugin.name}']" in refused.stdout + refused.stderr
    assert not plugin.marker.exists()

    near = run(*replay_args, "--allow-import", plugin.name[:-1], "--allow-import", f"{plugin.name}.x", env=env)
    assert near.returncode == 1 and not plugin.marker.exists()

    checked = run("validate", str(manifest), "--allow-import", plugin.name, env=env)
    assert checked.returncode == 0 and checked.stdout.startswith("OK")
    assert not plugin.marker.exists(), "validate reads the manifest; it never imports"

    allowed = run(*replay_args, "--allow-import", plugin.name, env=env)
    assert allowed.returncode == 0, allowed.stderr
    assert plugin.marker.read_text() == "imported"
    data = json.loads(allowed.stdout)
    assert data["settings"]["context_manager"]["ref"] == f"{plugin.name}:CM"
    assert all(f["check"] == "ok" for f in data["frames"])


# --- manifest file references stay inside the manifest's folder ----------------------------------

@pytest.fixture()
def outside_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside.md"
    secret.write_text("TOP-SECRET-FILE-CONTENT")
    return secret


@pytest.mark.parametrize("ref", ["../outside.md", "{abs}", "./link.md", "sub/../../outside.md"])
def test_context_files_outside_the_manifest_folder_are_never_read(tmp_path: Path, outside_secret: Path,
                                                                   ref: str) -> None:
    folder = tmp_path / "manifests"
    (folder / "sub").mkdir(parents=True)
    (folder / "link.md").symlink_to(outside_secret)
    manifest = folder / "m.yaml"
    manifest.write_text(f"kind: Agent\nspec:\n  context:\n    policy: {{ref: '{ref.format(abs=outside_secret)}'}}\n")
    with pytest.raises(ManifestError) as info:
        load_manifest(manifest, mode="validate")
    assert info.value.issues[0].path == "spec.context.policy.ref"
    assert "TOP-SECRET" not in str(info.value)
    try:
        loaded = load_manifest(manifest, mode="assemble")
    except ManifestError as exc:
        assert "TOP-SECRET" not in str(exc)
    else:
        assert "TOP-SECRET" not in json.dumps(loaded.settings.to_dict())
    out = run("validate", "--show", str(manifest))
    assert out.returncode == 1 and "TOP-SECRET" not in out.stdout + out.stderr


# --- secrets are masked in every output ----------------------------------------------------------

SECRETS = {
    "system_prompt": "sk-proj-SECRETSYSPROMPT0001",
    "context": "SECRETBEARERCTX0002xx",
    "memory_seed": "SECRETDBPASS0003",
    "model_key": "SECRETMODELKEY0004abcdef",
    "url_password": "SECRETURLPASS0005",
    "instructions": "SECRETINSTR0006abc",
    "user_text": "sk-SECRETUSERKEY0007abcdefgh",
    "tool_arguments": "SECRETARGKEY0008xyz",
    "tool_bearer": "SECRETTOOLBEARER0009zz",
    "github_token": "ghp_SECRETGHTOKEN0010abcdefghijkl",
    "aws_key": "AKIASECRETAWS0001122",
    "env_value": "s3cr3t-SECRETENV0012",
}

SECRET_MANIFEST = f"""\
kind: Agent
spec:
  system_prompt: "You are helpful. Deploy with OPENAI_API_KEY={SECRETS['system_prompt']}"
  context:
    creds: "Authorization: Bearer {SECRETS['context']}"
  memory_seeds:
    db: "postgres://app:{SECRETS['memory_seed']}@db.example.com/app"
  models:
    - id: main
      context_window: 1500
      max_tokens: 200
      api_key: {SECRETS['model_key']}
      api_base: "https://user:{SECRETS['url_password']}@proxy.example.com/v1"
  context_manager:
    type: summarising
    params:
      keep_turns: 1
      summarizer: {{type: llm, params: {{instructions: "Summarise. Never print token={SECRETS['instructions']}"}}}}
"""


def secret_transcript() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"role": "user", "content": f"Here is my key {SECRETS['user_text']}, please check it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "check_key", "arguments": json.dumps({"api_key": SECRETS["tool_arguments"]})}}]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": f"HTTP 401: Authorization: Bearer {SECRETS['tool_bearer']} rejected; "
                    f"env GITHUB_TOKEN={SECRETS['github_token']} AWS {SECRETS['aws_key']}"},
        {"role": "assistant", "content": f"Your .env has DB_PASSWORD={SECRETS['env_value']}; rotate it."},
    ]
    for i in range(4):
        rows += [{"role": "user", "content": f"follow-up {i} " + "detail " * 60},
                 {"role": "assistant", "content": f"reply {i} " + "more " * 60}]
    rows.append({"role": "user", "content": [{"type": "text", "text": f"one more: {SECRETS['user_text']}"}]})
    return rows


@pytest.fixture()
def secret_files(tmp_path: Path) -> tuple[Path, Path]:
    manifest = tmp_path / "secret.yaml"
    manifest.write_text(SECRET_MANIFEST)
    transcript = tmp_path / "secret.json"
    transcript.write_text(json.dumps(secret_transcript()))
    return manifest, transcript


def assert_no_secret(text: str, where: str) -> None:
    leaked = [name for name, value in SECRETS.items() if value in text]
    assert not leaked, f"{where} leaks {leaked}"


def test_the_fixture_really_carries_the_secrets(secret_files: tuple[Path, Path]) -> None:
    manifest, transcript = secret_files
    raw = manifest.read_text() + transcript.read_text()
    assert all(v in raw for v in SECRETS.values())
    loaded = load_manifest(manifest)
    rp = replay(loaded, parse_transcript(transcript.read_bytes(), name="secret.json"), counter="estimate",
                summarizer="stand-in")
    unmasked = json.dumps(rp.to_json(payloads=True)) + json.dumps(loaded.settings.to_dict())
    assert sum(v in unmasked for v in SECRETS.values()) >= 9, "the secrets reach the unmasked data"


CLI_OUTPUTS = {
    "replay-json-payloads": ["replay", "{m}", "{t}", "--counter", "estimate", "--summarizer", "stand-in", "--payloads"],
    "replay-table": ["replay", "{m}", "{t}", "--counter", "estimate", "--format", "table"],
    "replay-csv": ["replay", "{m}", "{t}", "--counter", "estimate", "--format", "csv"],
    "import": ["import", "{t}"],
    "validate-show": ["validate", "--show", "{m}"],
    "compare-json": ["compare", "{m}", "{t}", "--counter", "estimate", "--summarizer", "stand-in", "--format", "json",
                     "--strategy", "sum=summarising", "--strategy", "win={{type: sliding-window, params: {{keep_turns: 1}}}}"],
    "compare-table": ["compare", "{m}", "{t}", "--counter", "estimate", "--strategy", "a=stack", "--strategy", "b={m}"],
}


@pytest.mark.parametrize("cmd", list(CLI_OUTPUTS))
def test_cli_output_masks_every_secret(secret_files: tuple[Path, Path], cmd: str) -> None:
    manifest, transcript = secret_files
    args = [a.format(m=manifest, t=transcript) for a in CLI_OUTPUTS[cmd]]
    out = run(*args)
    assert out.returncode == 0, out.stderr
    assert_no_secret(out.stdout, f"{cmd} stdout")
    assert_no_secret(out.stderr, f"{cmd} stderr")
    if cmd in ("replay-json-payloads", "import", "validate-show"):
        assert "****" in out.stdout, "the secrets were there and got masked"


@pytest.mark.parametrize("cmd", ["replay", "import"])
def test_files_written_with_output_are_masked_too(secret_files: tuple[Path, Path], tmp_path: Path, cmd: str) -> None:
    manifest, transcript = secret_files
    target = tmp_path / f"{cmd}.json"
    args = ["replay", str(manifest), str(transcript), "--counter", "estimate", "--payloads"] if cmd == "replay" \
        else ["import", str(transcript)]
    out = run(*args, "-o", str(target))
    assert out.returncode == 0, out.stderr
    assert_no_secret(target.read_text(), f"{cmd} -o")
    assert "****" in target.read_text()


def test_a_secret_pasted_into_the_wrong_field_is_masked_in_the_error(tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(f"kind: Agent\nspec:\n  models:\n    - model: gpt-4o\n      max_tokens: {SECRETS['system_prompt']}\n")
    for args in (["validate", str(manifest)], ["validate", "--show", str(manifest)]):
        out = run(*args)
        assert out.returncode == 1
        assert "spec.models[0].max_tokens" in out.stderr  # errors go to stderr, located
        assert_no_secret(out.stdout + out.stderr, "validate error")


def test_the_live_api_key_never_reaches_the_output(llm: Any, secret_files: tuple[Path, Path]) -> None:
    llm.mode = "500"
    manifest, transcript = secret_files
    key = "sk-live-SECRETENVAPIKEY0013abcdef"
    out = run("replay", str(manifest), str(transcript), "--counter", "estimate", "--payloads",
              "--model", "openai/test-model", "--api-base", llm.api_base, env={"CONTEXT_INSPECTOR_API_KEY": key})
    assert out.returncode == 0, out.stderr
    assert key not in out.stdout + out.stderr
    assert json.loads(out.stdout)["totals"]["summarizer_failures"] > 0
    assert key not in repr(LLMEngine(model="m", api_key=key))


def test_report_tables_mask_message_previews(secret_files: tuple[Path, Path]) -> None:
    manifest, transcript = secret_files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp = replay(load_manifest(manifest), parse_transcript(transcript.read_bytes(), name="secret.json"),
                    counter="estimate", summarizer="stand-in")
    texts = [frames_table(rp).to_string(), compare_table({"x": rp}).to_string(), repairs_table(rp).to_string()]
    for k in range(len(rp.frames)):
        texts += [payload_table(rp, k).to_string(), not_sent_table(rp, k).to_csv()]
    assert any(len(not_sent_table(rp, k)) for k in range(len(rp.frames))), "some calls leave messages out"
    for text in texts:
        assert_no_secret(text, "report table")
    assert_no_secret(rp.dumps(payloads=True), "Replay.dumps")
