"""Context Inspector — step through a conversation and see every budget decision.

Run with ``make run`` (or ``streamlit run app.py``, or ``context-inspector app`` from an installed
package, which runs its copy ``inspector/_app/app.py``). This file is the page's settings and one
call: the page, its views and their state are :mod:`inspector.app` (:func:`inspector.app.page.main`
draws it), replays come from :mod:`inspector.replay`, and what the CLI and the notebooks show too
from :mod:`inspector.report`.
"""

from __future__ import annotations

import streamlit as st

from inspector import apply_offline_defaults
from inspector.app.page import main

apply_offline_defaults()  # this server process only; `import inspector` never changes the environment
st.set_page_config(page_title="Context Inspector", page_icon="🔎", layout="wide")
main()
