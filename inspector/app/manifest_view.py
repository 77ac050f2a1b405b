"""*Manifest*: the YAML editor (re-validated on every edit, error lines marked), its warnings and
the resolved settings with every default filled in."""

from __future__ import annotations

import streamlit as st

from inspector.app import editor, words
from inspector.app.widgets import show_problems
from inspector.manifest import LoadedManifest
from inspector.redact import mask_secrets, mask_text

ss = st.session_state


def manifest_tab(loaded: LoadedManifest | None, problems: list[str]) -> None:
    """*Manifest*: whether the editor's text is valid (with its problems), the numbered editor, the
    error lines' excerpt, the warnings, and the resolved settings of ``loaded`` (the last valid
    manifest) with every default filled in."""
    st.subheader("Manifest")
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
