"""The floor for ``benchmarks/app_browser.py``: the smallest Streamlit page that steps.

One "Next ▶" button, one line of markdown naming the call, nothing else. ``app_browser.py`` serves
it beside the inspector and drives it the same way in the same run, so its settle time is the best
any Streamlit app can do on this machine and browser (websocket round trip, script rerun, React
commit, paint). Opened with ``?plotly=1`` it also draws one three-bar Plotly chart: the earliest
any Streamlit page can show a Plotly figure here, since the browser loads plotly.js (a 4.7 MB
bundle) only once a Plotly chart reaches the page. Not part of the product; run it through
``app_browser.py``.
"""

import streamlit as st

st.session_state.setdefault("call", 0)


def step() -> None:
    st.session_state.call += 1


st.button("Next ▶", key="next", on_click=step)
with st.container(key="call_position"):
    st.markdown(f"**call {st.session_state.call} · floor**")
if st.query_params.get("plotly"):
    st.plotly_chart({"data": [{"type": "bar", "x": [0, 1, 2], "y": [3, 1, 2]}], "layout": {"height": 200}},
                    key="floor_chart")
