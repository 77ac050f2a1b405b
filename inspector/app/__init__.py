"""The Streamlit app: its page, its views and their state; ``app.py`` at the top of the checkout
(and ``inspector/_app/app.py`` in an installed package) is the thin entry that calls
:func:`inspector.app.page.main`.

Importing this package imports nothing: the command line's ``app`` subcommand reads
:mod:`inspector.app.first_page` without loading Streamlit. The modules fall in two kinds:

* the page, drawn with Streamlit: :mod:`~inspector.app.page` (top to bottom, and the per-call
  fragment), :mod:`~inspector.app.sidebar` (the inputs and their callbacks),
  :mod:`~inspector.app.loading` (the manifest and transcript to show), :mod:`~inspector.app.cached`
  (the only place anything is replayed), :mod:`~inspector.app.stepper` (the stepper and the
  timeline), one module per view (:mod:`~inspector.app.call_view`, :mod:`~inspector.app.compare_view`,
  :mod:`~inspector.app.fleet_view`, :mod:`~inspector.app.manifest_view`) and the small shared
  widgets of :mod:`~inspector.app.widgets`;
* what those views show, computed without Streamlit (the tests and the server's warm-up read them):
  :mod:`~inspector.app.inputs`, :mod:`~inspector.app.words`, :mod:`~inspector.app.stepping`,
  :mod:`~inspector.app.call_facts`, :mod:`~inspector.app.chat`, :mod:`~inspector.app.findings`,
  :mod:`~inspector.app.editor`, :mod:`~inspector.app.side_by_side`, :mod:`~inspector.app.exports`,
  :mod:`~inspector.app.timeline` and :mod:`~inspector.app.first_page`.

What the CLI and the notebooks show too lives in :mod:`inspector.report`.
"""
