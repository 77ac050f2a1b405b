"""*Manifest*: the context strategy picker (every registered strategy; choosing one rewrites
``spec.context_manager`` in the editor) with the parameters of the one in force, the YAML editor
(re-validated on every edit, error lines marked), its warnings and the resolved settings with every
default filled in."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from inspector.app import editor, words
from inspector.app.widgets import show_problems
from inspector.manifest import LoadedManifest, ManifestError
from inspector.manifest.strategy import parameter_rows, strategy_choices, with_strategy
from inspector.redact import mask_secrets, mask_text

ss = st.session_state


def on_strategy() -> None:
    """The select box's callback: the editor's text with ``spec.context_manager`` rewritten to the
    chosen strategy at its defaults (:func:`inspector.manifest.strategy.with_strategy`); a text that
    cannot be rewritten (not YAML, no ``spec``) is left as it is, with the reason kept to show."""
    ss.pop("manifest_strategy_problem", None)
    if ss.get("manifest_strategy") is None:  # the box cleared: nothing to write
        return
    try:
        ss.manifest_yaml = with_strategy(str(ss.manifest_yaml), str(ss.manifest_strategy))
    except ManifestError as exc:
        ss.manifest_strategy_problem = str(exc)


def strategy_picker(loaded: LoadedManifest | None) -> None:
    """The *Context strategy* select box: every registered context manager with its one-line
    description, the one in force in ``loaded`` (the last valid manifest) preselected; then the
    parameters of the strategy in force (value, default, meaning), from its params model."""
    choices = strategy_choices()
    cm = loaded.settings.context_manager if loaded is not None else None
    ss.manifest_strategy = cm.type if cm is not None and cm.type in choices else None
    st.selectbox("Context strategy", list(choices), key="manifest_strategy", index=None,
                 format_func=lambda k: f"{k} — {choices[k]}" if choices[k] else k, on_change=on_strategy,
                 placeholder="a strategy the registry does not list",
                 help="Every registered strategy. Choosing one rewrites spec.context_manager in the editor below "
                      "to it, at its defaults; the rest of the manifest (models, trimmer budget, the summarizer "
                      "when it takes one, comments) stays as written. Then edit its parameters in the YAML.")
    show_problems("The strategy could not be written into this text", [ss.pop("manifest_strategy_problem")]
                  if ss.get("manifest_strategy_problem") else [])
    if cm is None or cm.type not in choices:
        return
    rows = parameter_rows(cm.type, cm.params)
    st.caption(words.plain_md(f"{cm.type}: {choices[cm.type]}"))
    st.caption(f"Parameters of {words.code_span(cm.type)} in force (from {words.code_span(cm.source)}):"
               if rows else f"{words.code_span(cm.type)} takes no parameters.")
    if rows:
        narrow = {c: st.column_config.TextColumn(width="small") for c in ("value", "default")}
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="manifest_strategy_params",
                     column_config={**narrow, "meaning": st.column_config.TextColumn(width="large")})


def manifest_tab(loaded: LoadedManifest | None, problems: list[str]) -> None:
    """*Manifest*: the strategy picker (:func:`strategy_picker`), whether the editor's text is valid
    (with its problems), the numbered editor, the error lines' excerpt, the warnings, and the
    resolved settings of ``loaded`` (the last valid manifest) with every default filled in."""
    st.subheader("Manifest")
    strategy_picker(loaded)
    if problems:
        show_problems("This manifest is not valid — the views show the last valid one", problems)
    else:
        st.success("Valid manifest.")
    lines = ss.get("manifest_error_lines") or []
    st.html(editor.editor_css("manifest_yaml", str(ss.manifest_yaml), lines if problems else []))
    st.text_area("Manifest YAML (edits re-validate live; error lines marked ▶ in the margin)", key="manifest_yaml",
                 height=480, persist_state="page")
    if problems and lines:
        st.caption("The error line(s), marked ▶:")
        st.code(editor.error_excerpt(str(ss.manifest_yaml), lines), language=None)
    if loaded is not None:
        for w in loaded.warnings:
            st.warning(words.code_span(mask_text(str(w))))
        with st.expander("Resolved settings (every default filled in)"):
            st.json(mask_secrets(loaded.settings.to_dict()), expanded=1)
