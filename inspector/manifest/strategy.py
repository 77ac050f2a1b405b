"""Choosing a context strategy in a manifest's text: every registered ``context_manager`` with its
one-line description, its parameters in words, and the manifest text rewritten to another one.

What the app's *Manifest* view offers (a face only calls these). The list is the registry's
(:func:`inspector.plugins.default_registry`), so a strategy registered by a third party is offered
too; the parameters and their defaults come from each strategy's params model, never by hand.

:func:`with_strategy` edits the text, not a re-dumped document: only the lines of
``spec.context_manager`` (and a ``working_memory.compaction`` shorthand it replaces) change, so
every other line, comment and blank line of the manifest is kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

from inspector.manifest._yaml import ManifestLoader, parse_documents
from inspector.manifest.bindings import ASSEMBLY_KEYS, compaction_to_context_manager
from inspector.manifest.settings import Issue, ManifestError, UnknownPluginError
from inspector.params import PluginParams
from inspector.plugins import PluginSpec, default_registry

CM_PATH = "spec.context_manager"


def _first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, in plain words (no ````code```` marks)."""
    para = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    para = para.replace("``", "")
    cut = re.search(r"(?<=[.!?])\s", para)
    return para[:cut.start()] if cut else para


def strategy_description(spec: PluginSpec) -> str:
    """One line saying what the strategy ``spec`` does: the first sentence of its params model's
    docstring (else of its target's), without the leading name (``summarising (the default
    manager): fold …`` → ``(the default manager): fold …`` → ``the default manager: fold …``);
    "" when neither has a docstring (a target that fails to load says nothing)."""
    doc = spec.params_model.__doc__ if spec.params_model is not None else None
    if not doc:
        try:
            doc = getattr(spec.load(), "__doc__", None)
        except Exception:  # noqa: BLE001 - a broken third-party plugin is described by nothing
            doc = None
    text = _first_sentence(doc)
    if text.lower().startswith(spec.name.lower()):
        text = text[len(spec.name):].lstrip()
        if text.startswith("("):  # "(alias full-history): everything" -> "alias full-history: everything"
            text = re.sub(r"^\(([^()]*)\)", r"\1", text)
        text = text.lstrip(": ").strip()
    return text


def strategy_choices() -> dict[str, str]:
    """``{type: one-line description}`` of every registered context manager, in registration order
    (built-ins first, then any registered since): read from the registry on every call."""
    return {spec.name: strategy_description(spec) for spec in default_registry().specs("context_manager")}


def _shown(value: Any) -> str:
    """A parameter value as YAML writes it (``null``, ``true``, ``100000``, ``[a, b]``)."""
    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True).strip().removesuffix("\n...").strip()


def parameter_rows(strategy: str, written: Mapping[str, Any] | None = None) -> list[dict[str, str]]:
    """The parameters of the context manager ``strategy`` (a name, alias or URN) as rows
    ``{parameter, value, default, meaning}``: every field of its params model, the value it runs
    with given the params ``written`` (defaults filled, aliases folded, clamps applied: what
    :meth:`inspector.params.PluginParams.of` gives) and the model's default, each as YAML writes it.
    ``[]`` for a strategy without a params model. Raises :class:`UnknownPluginError` for a name no
    strategy has."""
    model = _spec(strategy).params_model
    if model is None:
        return []
    values = model.of(written or {}).model_dump()
    rows = []
    for name, fld in model.model_fields.items():
        meaning = (fld.description or "") + (" — no effect here" if name in model.inert() else "")
        rows.append({"parameter": name, "value": _shown(values.get(name)), "default": _shown(fld.default),
                     "meaning": meaning})
    return rows


def _spec(strategy: str) -> PluginSpec:
    """The registered context manager named ``strategy``; :class:`UnknownPluginError` naming the
    field and every registered type otherwise."""
    found = default_registry().find("context_manager", str(strategy)) if str(strategy or "").strip() else None
    if found is None:
        known = ", ".join(strategy_choices())
        raise UnknownPluginError([Issue(f"{CM_PATH}.type", f"unknown context_manager type {strategy!r} "
                                        f"(known: {known})")])
    return found


def strategy_binding(strategy: str, old: Any = None) -> dict[str, Any]:
    """The ``context_manager`` value for ``strategy`` with every parameter at its params model's
    default (aliases left out), keeping from the ``old`` value (a mapping as written; anything else
    keeps nothing) what is not the strategy's own: the assembly keys (``trimmer``: the budget) and
    the sub-plugins the new strategy accepts (its ``summarizer``). Raises :class:`UnknownPluginError`
    for an unknown ``strategy``."""
    spec = _spec(strategy)
    model: type[PluginParams] | None = spec.params_model
    params: dict[str, Any] = dict(model.defaults()) if model is not None else {}
    old_params = old.get("params") if isinstance(old, Mapping) else None
    if isinstance(old_params, Mapping):
        carried = (*(model.sub_plugins if model is not None else ()), *ASSEMBLY_KEYS)
        params.update({k: old_params[k] for k in carried if k in old_params})
    return {"type": spec.name, **({"params": params} if params else {})}


# --- the text edit ------------------------------------------------------------------------------

def _key(mapping: MappingNode, name: str) -> tuple[int, Node, Node] | None:
    """``(position, key node, value node)`` of ``name`` in ``mapping`` (the last one written wins,
    as when the YAML is read); None when absent."""
    found = None
    for k, (key, value) in enumerate(mapping.value):
        if isinstance(key, ScalarNode) and key.value == name:
            found = (k, key, value)
    return found


def _end_line(node: Node) -> int:
    """The 0-based line where ``node``'s own text ends: a scalar's or flow collection's end mark
    (the line before it when the mark sits at a line's start), a block collection's last child's
    (its own end mark lies at the next token, past any comment lines)."""
    if isinstance(node, ScalarNode) or getattr(node, "flow_style", False) or not node.value:
        return node.end_mark.line if node.end_mark.column > 0 else node.end_mark.line - 1
    children = [n for pair in node.value for n in pair] if isinstance(node, MappingNode) else node.value
    return max(_end_line(n) for n in children)


def _last_line(value: Node, lines: list[str]) -> int:
    """The 0-based last line holding ``value``'s text (:func:`_end_line`; blank and comment lines a
    block scalar's end mark may take in are left to what follows)."""
    end = min(_end_line(value), len(lines) - 1)
    while end > value.start_mark.line and (not lines[end].strip() or lines[end].lstrip().startswith("#")):
        end -= 1
    return max(end, value.start_mark.line)


def _block(body: dict[str, Any], indent: int) -> list[str]:
    """``context_manager:`` and ``body`` in block style, each line indented by ``indent`` spaces."""
    dumped = yaml.safe_dump({"context_manager": body}, sort_keys=False, default_flow_style=False,
                            allow_unicode=True, width=1000)
    return [" " * indent + line for line in dumped.splitlines()]


def _agent_spec(nodes: list[Node | None], docs: list[Any]) -> tuple[int, MappingNode]:
    """The position and ``spec`` mapping node of the manifest's Agent document (the first document
    with a ``spec`` mapping when none says ``kind: Agent``). Raises :class:`ManifestError` when no
    document has a ``spec`` mapping written in block style."""
    order = sorted(range(len(docs)), key=lambda i: not (isinstance(docs[i], Mapping) and docs[i].get("kind") == "Agent"))
    for i in order:
        root = nodes[i] if i < len(nodes) else None
        if isinstance(root, MappingNode) and not root.flow_style:
            found = _key(root, "spec")
            if found is not None and isinstance(found[2], MappingNode) and not found[2].flow_style:
                return i, found[2]
    raise ManifestError([Issue("spec", "no spec mapping written in block style to put the context manager in")])


def with_strategy(text: str, strategy: str) -> str:
    """``text`` (a manifest's YAML) with ``spec.context_manager`` replaced by ``strategy`` (a
    registered context manager's name, alias or URN) at its parameters' defaults
    (:func:`strategy_binding`, keeping the old binding's ``trimmer`` and the ``summarizer`` when the
    new strategy takes one); a ``working_memory.compaction`` shorthand, which the new binding
    overrides, is removed (its summarizer carried over the same way). Every other line of ``text``
    is kept as written, comments included; a manifest without ``spec.context_manager`` gets it
    after ``spec.models`` (else at the end of ``spec``).

    Raises :class:`UnknownPluginError` for an unknown ``strategy``, :class:`ManifestReadError` for
    text that is not well-formed YAML and :class:`ManifestError` when no document has a ``spec``
    mapping in block style."""
    _spec(strategy)
    docs, _, _ = parse_documents(text, None)
    nodes: list[Node | None] = list(yaml.compose_all(text, Loader=ManifestLoader))
    i, spec_node = _agent_spec(nodes, docs)
    spec_doc = docs[i]["spec"]
    lines = text.splitlines()
    old = spec_doc.get("context_manager")
    wm = _key(spec_node, "working_memory")
    compaction = _key(wm[2], "compaction") if wm is not None and isinstance(wm[2], MappingNode) else None
    edits: list[tuple[int, int, list[str]]] = []  # (first line, last line, new lines), 0-based, inclusive
    if wm is not None and compaction is not None:
        if old is None:
            try:
                old = compaction_to_context_manager(spec_doc["working_memory"].get("compaction"))
            except ManifestError:
                old = None
        whole = wm if len(wm[2].value) == 1 else compaction  # compaction alone: working_memory goes too
        edits.append((whole[1].start_mark.line, _last_line(whole[2], lines), []))
    new_block = _block(strategy_binding(strategy, old), spec_node.value[0][0].start_mark.column)
    cm = _key(spec_node, "context_manager")
    if cm is not None:
        edits.append((cm[1].start_mark.line, _last_line(cm[2], lines), new_block))
    else:
        after = _key(spec_node, "models") or (len(spec_node.value) - 1, *spec_node.value[-1])
        at = _last_line(after[2], lines) + 1
        edits.append((at, at - 1, new_block))  # an insertion: removes nothing
    for start, stop, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[start:stop + 1] = replacement
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")
