"""Benchmark of ``profdiff report`` (a script, not a test; prints figures, asserts nothing).

Prints, for the bundled pair ``samples/hs-ad-v1.prof`` / ``hs-ad-v2.prof`` and for a pair
of large ``.prof`` files (the subtrees under MAIN of ``tests/data/hs-ad/v{1,2}/ad.P.prof``
repeated to ``--mb`` MB each, as in ``bench_ghc_prof.py``):

* the time to read both runs, and the time to build and write the report (HTML),
* the HTML's size, frames kept and pruned,
* time-to-interactive in headless Chromium (navigation start until the page's script has
  rendered everything: ``body[data-ready]``), when playwright and /usr/bin/chromium exist.

Usage::

    python tests/bench/bench_report.py [--mb 100] [--runs 3]

Targets (issue 21): bundled pair < 1 s; 100 MB pair < 5 s and HTML < 5 MB; interactive
in < 2 s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ghc_prof import build_large  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def time_report(a: Path, b: Path, out: Path) -> dict:
    from profdiff.viewer.export.html_report import render_html
    from profdiff.viewer.export.report_data import report_document
    from profdiff.viewer.session import Session, SessionSpec

    t0 = time.perf_counter()
    session = Session.open(SessionSpec(files=(str(a), str(b))))
    t1 = time.perf_counter()
    doc = report_document(session)
    out.write_text(render_html(doc), encoding="utf-8")
    t2 = time.perf_counter()
    f = doc["flame"] or {}
    return {"read": t1 - t0, "report": t2 - t1, "total": t2 - t0,
            "html_mb": out.stat().st_size / 1e6, "rows": session.main.n_rows,
            "frames": f.get("n"), "pruned": f.get("pruned")}


def time_to_interactive(path: Path, runs: int) -> list[float] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path(CHROMIUM).exists():
        return None
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(runs):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                       else r.abort())
            t0 = time.perf_counter()
            page.goto(path.as_uri(), wait_until="commit")
            page.wait_for_selector("body[data-ready='1']", timeout=60_000)
            wall = time.perf_counter() - t0
            js = float(page.evaluate("document.body.dataset.readyMs")) / 1000
            out.append(min(wall, js))  # both count from the navigation's start
            page.close()
        browser.close()
    return out


def show(label: str, runs: list[dict], tti: list[float] | None) -> None:
    best = min(runs, key=lambda r: r["total"])
    print(f"{label}: {best['rows']:,} rows; read {best['read']:.2f} s, report "
          f"{best['report']:.2f} s, total {best['total']:.2f} s (best of {len(runs)}; first "
          f"{runs[0]['total']:.2f} s); HTML {best['html_mb']:.2f} MB, {best['frames']} frames "
          f"kept, {best['pruned']} pruned")
    if tti is not None:
        print(f"  time to interactive in headless Chromium: best {min(tti):.2f} s, "
              f"first {tti[0]:.2f} s ({len(tti)} loads)")
    else:
        print("  time to interactive: playwright or /usr/bin/chromium missing")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        small = [time_report(ROOT / "samples/hs-ad-v1.prof", ROOT / "samples/hs-ad-v2.prof",
                             t / "small.html") for _ in range(args.runs)]
        show("bundled pair", small, time_to_interactive(t / "small.html", args.runs))
        a, b = t / "a.prof", t / "b.prof"
        build_large(a, args.mb, ROOT / "tests/data/hs-ad/v1/ad.P.prof")
        build_large(b, args.mb, ROOT / "tests/data/hs-ad/v2/ad.P.prof")
        big = [time_report(a, b, t / "big.html") for _ in range(max(1, args.runs - 1))]
        show(f"{args.mb:g} MB pair", big, time_to_interactive(t / "big.html", args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
