"""The comparison report as one self-contained HTML page (no network, no CDN).

The page is ``resources/report/report.html`` with its CSS and hand-written JS inlined and
the :func:`viewer.export.report_data.report_document` embedded as one
``<script type="application/json">`` blob, so it opens from disk (a CI artifact) in any
current browser.  A Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any


def _resource(name: str) -> str:
    """The report's template, script or style sheet, shipped as package data."""
    from ..bundled import resource

    path = resource(f"report/{name}")
    if path is None:
        raise FileNotFoundError(f"profdiff.resources/report/{name} is not installed")
    return path.read_text(encoding="utf-8")


def embed_json(doc: dict[str, Any]) -> str:
    """JSON safe inside a ``<script>`` element: no ``</`` and no ``<!--`` can close it."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_html(doc: dict[str, Any]) -> str:
    """The page for a report document."""
    runs = doc.get("runs", [])
    title = "profdiff: " + " vs ".join(r.get("label") or Path(r["path"]).name for r in runs)
    page = _resource("report.html")
    # JS last: the data blob may contain any of the other markers' text
    for marker, text in (("/*TITLE*/", html.escape(title)), ("/*CSS*/", _resource("report.css")),
                         ("/*JS*/", _resource("report.js").replace("</", "<\\/")),
                         ("/*DATA*/", embed_json(doc))):
        head, sep, tail = page.partition(marker)
        page = head + text + tail if sep else page
    return page
