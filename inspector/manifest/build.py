"""Raw manifest documents → :class:`ContextSettings` (docs/design.md §2), in either mode.

One pass reads every section and reports through a :class:`Collector`; nothing here raises on
bad content until the very end, so validate mode lists every error at once. The two modes differ
only in what a finding becomes (see ``_collect.py``): validate is the compile-time gate
(``mas-ctl validate``), assemble mirrors the runtime, which tolerates a malformed binding (default
plugin) or a non-numeric trimmer value (automatic) so one bad field cannot fail every turn, but
never an unknown plugin name.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from inspector.bundled import SAMPLE_MARKER
from inspector.manifest._collect import Collector, Path_, describe, first_not_json
from inspector.manifest._yaml import MAX_BYTES, decode
from inspector.manifest.bindings import (
    ASSEMBLY_KEYS,
    DEPRECATED_KEYS,
    RawBinding,
    build_summarizer,
    check_params,
    checks_params,
    compaction_to_context_manager,
    make_binding,
    normalise_binding,
    resolve_plugin,
)
from inspector.manifest.models import (
    SPEC_KEYS,
    TOP_LEVEL_KEYS,
    CompactionModel,
    InfraModel,
    InfraModelsModel,
    ModelRowModel,
    SkillModel,
    ToolModel,
    TrimmerModel,
    WorkingMemoryModel,
    check_block,
)
from inspector.manifest.overrides import apply_overrides
from inspector.params import SAFETY_MARGIN_RATIO
from inspector.manifest.settings import (
    Binding,
    ContextSettings,
    InfraModels,
    ManifestError,
    ModelRow,
    PartSpec,
    TrimmerSettings,
)

INFRA_KINDS = ("llmproxy", "llmlocal", "infra")
PATH_SUFFIXES = (".md", ".yaml", ".yml", ".txt")
MAX_MAPPING_DEPTH = 10
"""Longest infra mapping chain (docs/design.md §2.3)."""

SPEC: Path_ = ("spec",)
CM_PATH: Path_ = ("spec", "context_manager")
ASM_PATH: Path_ = ("spec", "assembler")
WM_PATH: Path_ = ("spec", "working_memory")
COMPACTION_PATH: Path_ = ("spec", "working_memory", "compaction")


def build(documents: Sequence[Any], col: Collector, *, base_dir: Path | None = None,
          allow_imports: Iterable[str] = (), overrides: Iterable[str] = ()
          ) -> tuple[dict[str, Any], ContextSettings]:
    """Read the Agent document (plus any LLMProxy/LLMLocal/Infra documents) into settings.
    Raises :class:`ManifestError` (every error found) at the end if anything is wrong."""
    agent_index, infra_indices = _select_documents(documents, col)
    if agent_index is None:
        col.raise_if_errors()
        raise ManifestError("no Agent document")  # unreachable: _select_documents reported it
    col.doc = agent_index
    raw: dict[str, Any] = documents[agent_index]
    overrides = list(overrides)
    if overrides:
        raw = apply_overrides(raw, overrides)
    settings = _read_agent(raw, [documents[i] for i in infra_indices], infra_indices, col, base_dir,
                           tuple(allow_imports))
    col.raise_if_errors()
    return raw, settings


def _select_documents(documents: Sequence[Any], col: Collector) -> tuple[int | None, list[int]]:
    agent: int | None = None
    infra: list[int] = []
    many = sum(d is not None for d in documents) > 1
    for i, doc in enumerate(documents):
        if many:
            col.doc_prefix[i] = f"documents[{i}]."
        if doc is None:
            continue
        if not isinstance(doc, dict):
            col.error((), f"the top level must be a mapping (got {describe(doc)})", doc=i)
            continue
        kind = doc.get("kind")
        label = kind.strip().lower() if isinstance(kind, str) else kind
        if label is None or label == "agent":
            if agent is None:
                agent = i
                col.doc_prefix.pop(i, None)
            else:
                col.warn(("kind",), "only the first Agent document is used", doc=i, validate_only=True)
        elif label in INFRA_KINDS:
            infra.append(i)
        else:
            col.warn(("kind",), f"document of kind {kind!r} is ignored", doc=i, validate_only=True)
    if agent is None and not col.errors:
        col.error((), "no Agent document (a mapping with kind: Agent)", doc=0)
    return agent, infra


def _unknown_key(path: Path_, key: Any, known: Sequence[str], ignored: str, col: Collector) -> None:
    """A key the schema does not have: a near-miss of a known one (``spek``, ``contxt_manager``) is
    an error in every mode, with the suggestion, since reading on would silently use defaults;
    anything else is another tool's field, ignored (a warning in validate mode)."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75) if isinstance(key, str) else []
    if close:
        col.error(path + (key,), f"unknown key; did you mean {close[0]!r}? (as written it would be ignored)")
    else:
        col.warn(path + (key,), ignored, validate_only=True)


def _read_agent(raw: dict[str, Any], infra_docs: list[Any], infra_indices: list[int], col: Collector,
                base_dir: Path | None, allow_imports: tuple[str, ...]) -> ContextSettings:
    if "spec" not in raw and "kind" not in raw:
        looks = next((k for k in ("messages", "trajectory", "history", "events") if k in raw), None)
        col.error((), "not an agent manifest: no 'kind: Agent' and no 'spec:'"
                      + (f" (it looks like a transcript: it has '{looks}')" if looks else ""))
    for key in raw:
        if key not in TOP_LEVEL_KEYS:
            _unknown_key((), key, TOP_LEVEL_KEYS, "unknown top-level key, ignored", col)
    if "metadata" in raw and raw["metadata"] is not None and not isinstance(raw["metadata"], dict):
        col.warn(("metadata",), f"should be a mapping (got {describe(raw['metadata'])})", validate_only=True)
    sample = _sample_marker(raw.get("metadata"), col)
    spec = raw.get("spec")
    if spec is None:
        spec = {}
    elif not isinstance(spec, dict):
        col.error(SPEC, f"must be a mapping (got {describe(spec)})")
        spec = {}
    for key in spec:
        if key not in SPEC_KEYS:
            _unknown_key(SPEC, key, SPEC_KEYS, "not read by the inspector, ignored", col)

    injected = _system_prompt(spec, col) + _context_lines(spec.get("context"), col, base_dir)
    seeds = _memory_seeds(spec.get("memory_seeds"), col)
    parts = _skills(spec.get("skills"), col)
    tools = _tools(spec, col)
    models = _models(spec.get("models"), col)
    infra = _infra(spec.get("infra"), infra_docs, infra_indices, col)
    persistent, compaction = _working_memory(spec.get("working_memory"), col)
    assembler = _assembler(spec.get("assembler"), col, allow_imports)
    cm, summarizer, trimmer = _context_manager(spec, compaction, col, allow_imports)

    deprecated_ids = {id(i) for i in col.deprecated_issues}
    return ContextSettings(
        assembler=assembler,
        context_manager=cm,
        summarizer=summarizer,
        trimmer=trimmer,
        models=tuple(models),
        infra=infra,
        injected_context=tuple(injected),
        memory_seeds=tuple(seeds),
        parts=tuple(parts),
        tools=tools,
        persistent=persistent,
        sample=sample,
        deprecated=tuple(col.deprecated),
        warnings=tuple(f"{i.path}: {i.message}" if i.path else i.message
                       for i in col.warnings if id(i) not in deprecated_ids),
    )


def _sample_marker(metadata: Any, col: Collector) -> bool:
    """``metadata.context-inspector/sample``: true for a bundled sample (Q25); a value that is not
    true or false is an error in validate mode and, in assemble mode, a warning (not a sample)."""
    if not isinstance(metadata, dict) or SAMPLE_MARKER not in metadata:
        return False
    value = metadata[SAMPLE_MARKER]
    if not isinstance(value, bool):
        col.invalid(("metadata", SAMPLE_MARKER), f"must be true or false (got {describe(value)}); it marks a "
                                                 "bundled sample, whose replays keep the transcript's own "
                                                 "system text and tools")
        return False
    return value


# --- system band --------------------------------------------------------------------------------

def _system_prompt(spec: Mapping[str, Any], col: Collector) -> list[str]:
    value = spec.get("system_prompt")
    if value is None:
        return []
    if not isinstance(value, str):
        col.invalid(SPEC + ("system_prompt",), f"must be a string (got {describe(value)})")
        return []
    return [value.strip()] if value.strip() else []


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and len(text) <= 512 and ("/" in text or text.lower().endswith(PATH_SUFFIXES))


def _read_context_file(ref: str, path: Path_, col: Collector, base_dir: Path | None, *, required: bool) -> str | None:
    """Read a context file confined to the manifest directory.

    Why confined: manifests are untrusted (uploaded in the app); a chunk must not be able to pull
    ``../../etc/passwd`` into a displayed prompt. ``required`` (``./``, ``../``, ``{ref}``) makes a
    missing file an error; otherwise the caller keeps the value as inline text.
    """
    if base_dir is None:
        if required:
            col.warn(path, f"{ref!r} not read: the manifest was loaded without a directory")
        return None
    try:
        base = base_dir.resolve()
        target = (base / ref).resolve()
    except (OSError, ValueError, RuntimeError):  # e.g. an embedded NUL, a symlink loop
        if required:
            col.error(path, f"{ref!r} is not a valid file path")
        return None
    if not target.is_relative_to(base):
        if required:
            col.error(path, f"{ref!r} is outside the manifest directory")
        return None
    try:
        if not target.is_file():
            if required:
                col.error(path, f"file {ref!r} not found (relative to the manifest directory)")
            return None
        size = target.stat().st_size
        if size > MAX_BYTES:
            col.error(path, f"file {ref!r} is too large ({size:,} bytes; the limit is {MAX_BYTES:,})")
            return None
        data = target.read_bytes()
    except (OSError, ValueError) as exc:
        col.error(path, f"cannot read {ref!r}: {exc}")
        return None
    try:
        return decode(data, ref, what=f"file {ref!r}")
    except ManifestError as exc:
        col.error(path, exc.issues[0].message)
        return None


def _context_lines(value: Any, col: Collector, base_dir: Path | None) -> list[str]:
    """docs/design.md §2.7: each chunk becomes ``[key] text`` in dict order."""
    where = SPEC + ("context",)
    if value is None:
        return []
    if not isinstance(value, dict):
        col.invalid(where, f"must be a mapping of key: text (got {describe(value)})")
        return []
    lines: list[str] = []
    for key, chunk in value.items():
        path = where + (str(key),)
        text: str | None
        if chunk is None:
            continue
        if isinstance(chunk, str):
            stripped = chunk.strip()
            if stripped.startswith(("./", "../")):
                text = _read_context_file(stripped, path, col, base_dir, required=True)
            elif stripped and _looks_like_path(stripped):
                text = _read_context_file(stripped, path, col, base_dir, required=False)
                if text is None:
                    text = chunk
                    if not any(c.isspace() for c in stripped):
                        col.warn(path, f"{stripped!r} looks like a file path but no such file exists under the "
                                       "manifest directory; used as inline text")
            else:
                text = chunk
        elif isinstance(chunk, dict) and "ref" in chunk:
            ref = chunk["ref"]
            for extra in chunk:
                if extra != "ref":
                    col.invalid(path + (str(extra),), "unknown key (allowed: ref)")
            if not isinstance(ref, str) or not ref.strip():
                col.invalid(path + ("ref",), f"must be a file path (got {describe(ref)})")
                continue
            text = _read_context_file(ref.strip(), path + ("ref",), col, base_dir, required=True)
        else:
            col.warn(path, f"skipped: a context chunk must be text or {{ref: path}} (got {describe(chunk)})")
            continue
        if text is not None and text.strip():
            lines.append(f"[{key}] {text.strip()}")
    return lines


def _memory_seeds(value: Any, col: Collector) -> list[tuple[str, str]]:
    where = SPEC + ("memory_seeds",)
    if value is None:
        return []
    if not isinstance(value, dict):
        col.invalid(where, f"must be a mapping of key: text (got {describe(value)})")
        return []
    seeds: list[tuple[str, str]] = []
    for key, text in value.items():
        if text is None or (isinstance(text, str) and not text.strip()):
            continue
        if not isinstance(text, str):
            col.invalid(where + (str(key),), f"must be text (got {describe(text)})")
            continue
        seeds.append((str(key), text.strip()))
    return seeds


def _skills(value: Any, col: Collector) -> list[PartSpec]:
    """docs/design.md Q7: the catalog and each activated skill are pinned ``system_skills`` parts."""
    where = SPEC + ("skills",)
    if value is None:
        return []
    if not isinstance(value, list):
        col.invalid(where, f"must be a list of skills (got {describe(value)})")
        return []
    skills: list[SkillModel] = []
    names: set[str] = set()
    for i, item in enumerate(value):
        skill = SkillModel(name=item) if isinstance(item, str) and item.strip() else \
            check_block(SkillModel, item, where + (i,), col)
        if skill is None:
            continue
        if skill.name in names:
            col.invalid(where + (i, "name"), f"duplicate skill name {skill.name!r}")
            continue
        names.add(skill.name)
        skills.append(skill)
    if not skills:
        return []
    catalog = "Available skills:\n" + "\n".join(
        f"- {s.name}: {s.description.strip()}" if s.description and s.description.strip() else f"- {s.name}"
        for s in skills)
    parts = [PartSpec(catalog, "skills/catalog", "system_skills", 40, True, "skills")]
    for s in skills:
        if s.activated:
            body = (s.body or "").strip()
            parts.append(PartSpec(f'<activated_skill name="{s.name}">\n{body}\n</activated_skill>',
                                  f"skills/activated/{s.name}", "system_skills", 40 + len(parts), True, "skills"))
    return parts


def _tools(spec: Mapping[str, Any], col: Collector) -> tuple[Mapping[str, Any], ...] | None:
    where = SPEC + ("tools",)
    if "tools" not in spec or spec["tools"] is None:
        return None
    value = spec["tools"]
    if not isinstance(value, list):
        col.invalid(where, f"must be a list of OpenAI tool schemas (got {describe(value)})")
        return None
    tools: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, item in enumerate(value):
        if isinstance(item, dict) and "function" not in item and "type" not in item and "name" in item:
            col.warn(where + (i,), "normalised to {type: function, function: {...}}", validate_only=True)
            item = {"type": "function", "function": item}
        if not isinstance(item, dict):
            col.invalid(where + (i,), f"must be an OpenAI tool schema {{type: function, function: {{name, ...}}}} "
                                      f"(got {describe(item)})")
            continue
        try:
            ToolModel.model_validate(item)
        except ValidationError:  # report every problem; a broken schema is never sent
            check_block(ToolModel, item, where + (i,), col, warn_extra=False)
            continue
        name = item["function"]["name"]
        if name in names:
            col.invalid(where + (i, "function", "name"), f"duplicate tool name {name!r}")
            continue
        odd = first_not_json(item, where + (i,))
        if odd is not None:  # a schema is sent as JSON: a value JSON cannot write could never be sent
            col.invalid(odd[0], f"must be a JSON value (string, number, true/false, null, list or mapping); "
                                f"got {describe(odd[1])} (quote it in YAML)")
            continue
        names.add(name)
        tools.append(copy.deepcopy(item))
    return tuple(tools)



# --- models and infra -----------------------------------------------------------------------------

def _models(value: Any, col: Collector) -> list[ModelRow]:
    where = SPEC + ("models",)
    if value is None:
        return []
    if not isinstance(value, list):
        col.invalid(where, f"must be a list of model rows (got {describe(value)})")
        return []
    rows: list[ModelRow] = []
    ids: set[str] = set()
    for i, item in enumerate(value):
        row = check_block(ModelRowModel, item, where + (i,), col)
        if row is None:
            continue
        fields = row.model_dump(exclude_unset=True)
        row_id = row.id if row.id is not None and row.id.strip() else "main"
        if row_id in ids:
            col.invalid(where + (i, "id"), f"duplicate model id {row_id!r}")
            continue
        ids.add(row_id)
        extra = {k: v for k, v in fields.items() if k not in ("id", "model", "max_tokens", "context_window")}
        rows.append(ModelRow(row_id, row.model, row.max_tokens, row.context_window, copy.deepcopy(extra)))
    return rows


def _infra(agent_infra: Any, infra_docs: list[Any], infra_indices: list[int], col: Collector) -> InfraModels:
    """Merge LLMProxy/LLMLocal/Infra documents (in file order), then the agent's ``spec.infra``."""
    sources: list[tuple[int | None, Path_, Any]] = []
    for index, doc in zip(infra_indices, infra_docs, strict=True):
        spec = doc.get("spec")
        if spec is None:
            continue
        if not isinstance(spec, dict):
            col.invalid(("spec",), f"must be a mapping (got {describe(spec)})", doc=index)
            continue
        if spec.get("models") is not None:
            sources.append((index, ("spec", "models"), spec["models"]))
    if agent_infra is not None:
        block = check_block(InfraModel, agent_infra, SPEC + ("infra",), col)
        if block is not None and block.models is not None:
            sources.append((None, SPEC + ("infra", "models"), block.models))
    mappings: dict[str, str] = {}
    origin: dict[str, tuple[int | None, Path_]] = {}
    allowed: list[str] = []
    generation: dict[str, Any] = {}
    for doc, path, value in sources:
        block_m = check_block(InfraModelsModel, value, path, col, doc=doc)
        if block_m is None:
            continue
        for src, dst in (block_m.mappings or {}).items():
            mappings[src] = dst
            origin[src] = (doc, path + ("mappings", src))
        allowed.extend(a for a in block_m.allowed or () if a not in allowed)
        if block_m.generation is not None:
            gen = block_m.generation.model_dump(exclude_unset=True)
            pricing = {**generation.get("pricing", {}), **gen.pop("pricing", {})}
            generation.update(gen)
            if pricing:
                generation["pricing"] = pricing
    cycles: set[frozenset[str]] = set()
    for src in mappings:
        chain = [src]
        current = src
        while current in mappings:
            current = mappings[current]
            if current in chain:
                loop = frozenset(chain[chain.index(current):])
                if loop not in cycles:  # report each cycle once, at its first key
                    cycles.add(loop)
                    doc, path = origin[src]
                    col.invalid(path, f"mapping chain cycles: {' → '.join(chain + [current])}", doc=doc)
                break
            chain.append(current)
            if len(chain) > MAX_MAPPING_DEPTH + 1:
                doc, path = origin[src]
                col.invalid(path, f"mapping chain is deeper than {MAX_MAPPING_DEPTH}", doc=doc)
                break
    return InfraModels(mappings=mappings, allowed=tuple(allowed), generation=generation)


# --- working memory, plugin slots, trimmer ----------------------------------------------------------

def _working_memory(value: Any, col: Collector) -> tuple[bool, tuple[Any, ...] | None]:
    """Returns (persistent, (compaction,) or None when no compaction block is written)."""
    if value is None:
        return True, None
    wm = check_block(WorkingMemoryModel, value, WM_PATH, col)
    persistent = wm.persistent if wm is not None else True
    if not persistent:
        # A replay, and a ContextEngine, is one conversation of one agent: there is no later delegate
        # call for the committed history to be kept for or cleared before, so false changes nothing.
        # Said at the field (every mode), and listed as deprecated, instead of being silently inert.
        col.deprecate(WM_PATH + ("persistent",), "false has no effect here: a replay (and an engine) is one "
                                                 "conversation of one agent, so its committed history always "
                                                 "carries from turn to turn; accepted so reference manifests load")
    compaction = value.get("compaction") if isinstance(value, dict) else None
    return persistent, (compaction,) if isinstance(compaction, dict) else None


def _assembler(value: Any, col: Collector, allow_imports: tuple[str, ...]) -> Binding:
    raw = normalise_binding(value, "assembler", ASM_PATH, col)
    source = {"omitted": "default", "malformed": "default (malformed spec.assembler ignored)"}.get(
        raw.form, "spec.assembler")
    if raw.form == "malformed":
        raw = RawBinding("omitted")
    spec = resolve_plugin("assembler", raw, ASM_PATH, col, allow_imports)
    params = dict(raw.params)
    if spec is not None:
        for key in check_params(spec, raw.params, ASM_PATH + ("params",), col):
            params.pop(key, None)
    return make_binding(spec, raw, params, source)


def _context_manager(spec_doc: Mapping[str, Any], compaction: tuple[Any, ...] | None, col: Collector,
                     allow_imports: tuple[str, ...]) -> tuple[Binding, Binding | None, TrimmerSettings]:
    """docs/design.md §2.1, §2.4, §3.6a: normalise, apply the compaction sugar, split the params."""
    raw = normalise_binding(spec_doc.get("context_manager"), "context_manager", CM_PATH, col)
    base = CM_PATH
    if raw.form == "omitted" and compaction is not None:
        source = "spec.working_memory.compaction"
        base = COMPACTION_PATH
        raw = _from_compaction(compaction[0], col)
    elif raw.form == "omitted":
        source = "default"
    elif raw.form == "malformed":
        source = "default (malformed spec.context_manager ignored)"
        raw = RawBinding("omitted")
    else:
        source = "spec.context_manager"
    if compaction is not None and source != "spec.working_memory.compaction":
        col.warn(COMPACTION_PATH, "ignored because spec.context_manager is set (context_manager wins)")
        if col.strict:
            check_block(CompactionModel, compaction[0], COMPACTION_PATH, col)

    spec = resolve_plugin("context_manager", raw, base, col, allow_imports)
    params_path = base + ("params",) if base == CM_PATH else base
    params = dict(raw.params)
    written = spec_doc.get("context_manager")
    if source == "spec.context_manager" and isinstance(written, dict) and "memory" in written:
        col.warn(CM_PATH + ("memory",), "accepted and not used", validate_only=True)
    for key in DEPRECATED_KEYS:
        if key in params:
            col.deprecate(params_path + (key,), "deprecated: accepted and ignored; live working memory is "
                                                "bounded by the token trimmer only")
    if "working_memory_ref" in params:
        col.warn(params_path + ("working_memory_ref",), "accepted and not used", validate_only=True)
    trimmer = _trimmer(params.get("trimmer"), params_path + ("trimmer",), col)
    strategy = {k: v for k, v in params.items() if k not in ASSEMBLY_KEYS and k != "summarizer"}

    summarizer: Binding | None = None
    if spec is not None:
        for key in check_params(spec, params, params_path, col, skip=ASSEMBLY_KEYS):
            strategy.pop(key, None)
        takes_summarizer = "summarizer" in spec.params or (not checks_params(spec) and "summarizer" in params)
        if takes_summarizer:
            sum_source = source if source == "spec.working_memory.compaction" else \
                "default" if params.get("summarizer") is None else "spec.context_manager.params.summarizer"
            summarizer = build_summarizer(params.get("summarizer"), params_path + ("summarizer",), col,
                                          sum_source, allow_imports)
    return make_binding(spec, raw, strategy, source), summarizer, trimmer


def _from_compaction(value: Any, col: Collector) -> RawBinding:
    """The compaction sugar, after a structural check; an unknown strategy is an error in every
    mode (docs/design.md §2.4), the rest falls back field by field in assemble mode."""
    block = check_block(CompactionModel, value, COMPACTION_PATH, col)
    if block is None:
        return RawBinding("omitted")
    written = block.model_dump(exclude_unset=True)
    try:
        translated = compaction_to_context_manager(written)
    except ManifestError as exc:
        for issue in exc.issues:
            col.error(COMPACTION_PATH + ("strategy",), issue.message)
        return RawBinding("omitted")
    strategy = written.get("strategy") or "keep_recent"
    used = {"strategy", *translated["params"], *(("model",) if "summarizer" in translated["params"] else ())}
    for key in written:
        if key not in used and written[key] is not None:
            col.warn(COMPACTION_PATH + (key,), f"not used by strategy {strategy}", validate_only=True)
    return RawBinding("object", type=translated["type"], params=translated["params"])


def _trimmer(value: Any, path: Path_, col: Collector) -> TrimmerSettings:
    """docs/design.md §2.1/§3.2. Invalid values are errors in validate mode and silently automatic at
    runtime; the reserve is floored at 0 and the margin ratio clamped (its range is declared once,
    on :class:`inspector.params.TrimmerParams`)."""
    if value is None:
        return TrimmerSettings()
    block = check_block(TrimmerModel, value, path, col, lenient="silent")
    if block is None:
        return TrimmerSettings()
    max_tokens = block.max_tokens if block.max_tokens is not None else block.token_budget
    if block.max_tokens is not None and block.token_budget is not None and block.max_tokens != block.token_budget:
        col.warn(path + ("token_budget",), "ignored: max_tokens is also set and wins", validate_only=True)
    reserve = block.reserve_tokens
    if reserve is not None and reserve < 0:
        col.invalid(path + ("reserve_tokens",), f"must be >= 0 (got {reserve}); floored at 0", lenient="silent")
        reserve = 0
    ratio = float(block.safety_margin_ratio)  # finite: the model refuses NaN and infinities
    clamp = TrimmerModel.clamp_of("safety_margin_ratio") or SAFETY_MARGIN_RATIO
    if clamp(ratio) != ratio:
        col.warn(path + ("safety_margin_ratio",), f"{ratio} is outside {clamp} and is clamped", validate_only=True)
        ratio = clamp(ratio)
    return TrimmerSettings(max_tokens=max_tokens, reserve_tokens=reserve, safety_margin_ratio=ratio)

