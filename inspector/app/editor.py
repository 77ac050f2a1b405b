"""The manifest editor's look: numbered lines, error lines marked, an excerpt around each error.

Presentation only (CSS and an SVG of numbers; the text itself is never put into the SVG). No
Streamlit import.
"""

from __future__ import annotations

from collections.abc import Iterable


def error_excerpt(text: str, lines: Iterable[int], context: int = 2) -> str:
    """The manifest's lines around each error line, numbered, the error lines marked ``▶``."""
    src = text.splitlines()
    marked = {n for n in lines if 1 <= n <= max(len(src), 1)}
    keep = sorted({k for n in marked for k in range(max(1, n - context), min(len(src), n + context) + 1)})
    width = len(str(max(keep, default=1)))
    out, last = [], 0
    for k in keep:
        if last and k > last + 1:
            out.append("   " + "·" * width)
        out.append(f"{'▶' if k in marked else ' '} {k:>{width}} │ {src[k - 1]}")
        last = k
    return "\n".join(out)


EDITOR_LINE_PX = 20
"""Line height of the manifest editor; the gutter's numbers are drawn on the same grid."""


EDITOR_PAD_PX = 8


EDITOR_GUTTER_PX = 46


def editor_gutter_svg(text: str, error_lines: Iterable[int] = ()) -> str:
    """Line numbers for the manifest editor, drawn as an SVG the editor shows as its background.

    One number per line of ``text`` (``text.split("\n")``: a trailing newline is a line, as the
    editor shows it), on a :data:`EDITOR_LINE_PX` grid; each error line gets ``▶`` before its number
    and a red band across the editor. The SVG scrolls with the text (``background-attachment:
    local``) and the editor does not wrap lines, so number k always sits beside line k. No script:
    the text is not in the SVG, only numbers."""
    count = len(text.split("\n"))
    marked = {n for n in error_lines if 1 <= n <= count}
    height = 2 * EDITOR_PAD_PX + count * EDITOR_LINE_PX
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="{height}">',
             f'<rect x="0" y="0" width="{EDITOR_GUTTER_PX - 6}" height="{height}" fill="#f0f2f6"/>']
    for n in sorted(marked):
        top = EDITOR_PAD_PX + (n - 1) * EDITOR_LINE_PX
        parts.append(f'<rect class="error" x="0" y="{top}" width="4000" height="{EDITOR_LINE_PX}" '
                     'fill="#ff2b2b" fill-opacity="0.16"/>')
    for n in range(1, count + 1):
        base = EDITOR_PAD_PX + (n - 1) * EDITOR_LINE_PX + 14
        mark, color = ("▶ ", "#d00000") if n in marked else ("", "#8a8d96")
        parts.append(f'<text x="{EDITOR_GUTTER_PX - 12}" y="{base}" text-anchor="end" font-family="monospace" '
                     f'font-size="12" fill="{color}">{mark}{n}</text>')
    parts.append("</svg>")
    return "".join(parts)


def editor_css(key: str, text: str, error_lines: Iterable[int] = ()) -> str:
    """The ``<style>`` that turns the text area with widget key ``key`` into a numbered,
    monospace, non-wrapping editor (see :func:`editor_gutter_svg`)."""
    from urllib.parse import quote

    svg = quote(editor_gutter_svg(text, error_lines), safe="")
    return (f"<style>.st-key-{key} textarea {{font-family: 'Source Code Pro', ui-monospace, monospace !important; "
            f"font-size: 13px !important; line-height: {EDITOR_LINE_PX}px !important; "
            f"padding: {EDITOR_PAD_PX}px 8px {EDITOR_PAD_PX}px {EDITOR_GUTTER_PX}px !important; "
            "white-space: pre !important; overflow-wrap: normal !important; overflow-x: auto !important; "
            f"background-image: url(\"data:image/svg+xml,{svg}\") !important; background-repeat: no-repeat !important; "
            "background-attachment: local !important; background-position: 0 0 !important;}</style>")
