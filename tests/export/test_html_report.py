"""The HTML report in a real browser: Debian's Chromium driven by playwright, opened from
disk with every non-file request aborted (the page must be self-contained)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from tool_requirements import require, require_module

from profdiff.viewer.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
A, B = SAMPLES / "hs-ad-v1.prof", SAMPLES / "hs-ad-v2.prof"
CHROMIUM = os.environ.get("PROFDIFF_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def write_report(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "diff.html"
    assert main(["report", str(A), str(B), "-o", str(out), *extra]) == 0
    return out


def embedded(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="profdiff-data">(.*?)</script>', html,
                  re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_report_is_self_contained_and_ranks_the_culprit(tmp_path):
    html = write_report(tmp_path).read_text(encoding="utf-8")
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)  # no external resource
    doc = embedded(html)
    assert doc["changes"]["rows"][0]["name"] == "addGrad"
    assert doc["changes"]["rows"][0]["verdict"] == "real"
    totals = {t["key"]: t for t in doc["totals"]}
    # GHC's header of the two files: total alloc 4,291,393,792 and 6,560,334,592 bytes
    assert totals["total_alloc_bytes"]["values"] == [4291393792, 6560334592]
    assert any("sigmoidD" in w and "logisticD" in w for w in doc["warnings"])
    f = doc["flame"]
    assert f["pruned"] == 0 and f["name"][0] == "MAIN"
    # widths: inherited alloc; MAIN's is the header's total alloc of each run
    assert f["metric"] == "inherited_alloc_bytes"
    # (to the million: a plain -p report's bytes are 100.0 % x total, ± 0.05 % of it)
    assert (f["base"][0], f["new"][0]) == ("≈4,291,000,000 B", "≈6,560,000,000 B")
    grad = f["name"].index("addGrad")
    # in v1 addGrad ran (same entries) without allocating: a change, not an addition
    assert f["status"][grad] == "changed" and f["base"][grad] == "0 B" != f["new"][grad]


def test_report_prunes_big_trees_and_says_so(tmp_path):
    doc = embedded(write_report(tmp_path, "--max-frames", "30").read_text(encoding="utf-8"))
    f = doc["flame"]
    assert f["n"] <= 30 and f["pruned"] == f["total_rows"] - f["n"] > 0
    kept_parents = [p for p in f["parent"] if p >= 0]
    assert all(0 <= p < f["n"] for p in kept_parents)  # every kept frame's parent is kept


def _browser():
    sync_api = require_module("playwright.sync_api", "pip install playwright; never "
                              "'playwright install': the system Chromium is used")
    require(Path(CHROMIUM).exists(), f"{CHROMIUM} is missing (apt-get install chromium)")
    return sync_api


def test_report_in_chromium(tmp_path):
    sync_api = _browser()
    path = write_report(tmp_path)
    errors: list[str] = []
    blocked: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            def route(r):
                if r.request.url.startswith("file:"):
                    r.continue_()
                else:
                    blocked.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(path.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            first = page.locator("#changes tbody tr").first.locator("td").nth(2)
            assert first.inner_text() == "addGrad"
            # sorting by name (a header click) reorders; filtering narrows
            page.fill("#change-filter", "evalDelta")
            assert page.locator("#changes tbody tr").count() == 1
            page.fill("#change-filter", "")
            page.select_option("#verdict-filter", "real")
            verdicts = page.locator("#changes tbody tr td:nth-child(2)").all_inner_texts()
            assert verdicts and set(verdicts) == {"real"}
            page.locator("#changes th[data-col='name']").click()
            names = page.locator("#changes tbody tr td:nth-child(3)").all_inner_texts()
            assert names == sorted(names, key=str.lower) or names == sorted(names)
            # the flame graph: click a frame and it fills the width
            frame = page.locator("#flame .fr", has_text=re.compile(r"^AD\.Eval\.backprop$"))
            if frame.count() == 0:
                frame = page.locator("#flame .fr", has_text="backprop")
            before = frame.first.bounding_box()
            width = page.locator("#flame").bounding_box()["width"]
            assert before is not None and before["width"] < width * 0.9
            frame.first.click()
            zoomed = page.locator("#flame").get_attribute("data-zoomed")
            assert zoomed != ""
            after = page.locator(f"#flame .fr[data-i='{zoomed}']").bounding_box()
            assert after is not None and after["width"] > width * 0.95
            page.hover(f"#flame .fr[data-i='{zoomed}']")
            tip = page.locator("#tooltip").inner_text()
            assert "base:" in tip and "new:" in tip and "Δ:" in tip and "own Δ:" in tip
            page.click("#flame-reset")
            page.fill("#flame-search", "addGrad")
            hits = page.locator("#flame .fr.match")
            assert hits.count() >= 1
            assert "matching frames" in page.inner_text("#flame-info")
            # the collapsible tree: a click on a twisty opens or closes a subtree
            n_open = page.locator("#tree li").count()
            page.locator("#tree li .tw").first.click()
            assert page.locator("#tree li").count() < n_open
            page.fill("#flame-search", "")
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
            # a pruned report says so in the page
            small = tmp_path / "pruned"
            small.mkdir()
            pruned = write_report(small, "--max-frames", "30")
            doc = embedded(pruned.read_text(encoding="utf-8"))
            page.goto(pruned.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            note = page.inner_text("#flame-note")
            assert f"Pruned: {doc['flame']['pruned']} of {doc['flame']['total_rows']}" in note
            assert page.locator("#tree li[data-i]").count() <= 30
        finally:
            browser.close()
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert errors == []
    assert blocked == []


@pytest.mark.parametrize("name", ["x.md"])
def test_markdown_is_gfm_tables(tmp_path, name):
    markdown_it = require_module("markdown_it", "pip install markdown-it-py")
    out = tmp_path / name
    rc = main(["report", str(A), str(B), "-o", str(out), "--fail-if", "alloc_bytes>+10%"])
    assert rc == 1  # the gate is crossed, as in 'profdiff diff'
    text = out.read_text(encoding="utf-8")
    assert len(text.encode()) < 60_000
    md = markdown_it.MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    tables = [i for i, t in enumerate(tokens) if t.type == "table_open"]
    assert len(tables) == 3  # fail-if violations, totals, top changes
    rows = _table_rows(tokens, tables[2])
    head, body = rows[0], rows[1:]
    assert head[:4] == ["#", "verdict", "function", "score"]
    assert len(body) == 10 and all(len(r) == len(head) for r in body)
    assert body[0][1:3] == ["real", "AD.Eval.addGrad"]
    assert {r[1] for r in body} <= {"real", "within noise", "within rounding", "no change",
                                    "added", "removed"}
    totals = _table_rows(tokens, tables[1])
    assert ["total alloc", "4,291,393,792 B", "6,560,334,592 B", "+2,268,940,800 B",
            "+52.9%"] in totals
    assert "--fail-if ❌ failed" in text


def _table_rows(tokens, start: int) -> list[list[str]]:
    rows, row = [], None
    for t in tokens[start:]:
        if t.type == "table_close":
            break
        if t.type == "tr_open":
            row = []
        elif t.type == "inline" and row is not None:
            row.append(t.content)
        elif t.type == "tr_close":
            rows.append(row)
    return rows


def test_diff_writes_the_report_in_the_same_run(tmp_path, capsys):
    out = tmp_path / "out.html"
    rc = main(["diff", str(A), str(B), "--fail-if", "alloc_bytes>+10%", "--report", str(out)])
    assert rc == 1
    assert "fail-if: 3 threshold(s) crossed" in capsys.readouterr().out
    doc = embedded(out.read_text(encoding="utf-8"))
    assert doc["fail_if"]["failed"] and doc["changes"]["rows"][0]["name"] == "addGrad"


def test_report_of_unreadable_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "cut.prof"
    bad.write_bytes(A.read_bytes()[:300])
    rc = main(["report", str(A), str(bad), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert rc == 2 and "cut.prof" in err and "Traceback" not in err


DATA = Path(__file__).resolve().parents[1] / "data"
FORMAT_PAIRS = {
    "ghc-rts": ["ghc-rts/hs-ad-v1.stats.txt", "ghc-rts/hs-ad-v2.stats.txt"],
    "ghc-ticky": ["ghc-ticky/hs-ad-v1.ticky.txt", "ghc-ticky/hs-ad-v2.ticky.txt"],
    "ghc-prof -P, auto-match": ["hs-ad/v1/ad.P.prof", "hs-ad/v2/ad.P.prof", "--auto-match"],
    "ghc-prof-json": ["hs-ad/v1/ad.prof.json", "hs-ad/v2/ad.prof.json"],
    "groups": ["--base", "hs-ad/noise-v1/run1/ad.prof", "hs-ad/noise-v1/run2/ad.prof",
               "hs-ad/noise-v1/run3/ad.prof", "--new", "hs-ad/v2/ad.prof"],
    "pprof": ["pprof/go-1.18-wordcount-amd64-B4KO-cpu.pprof",
              "pprof/go-1.18-wordcount-arm64-Andreaswiv-cpu.pprof"],
    "folded": ["folded/flamegraph-perf-numa-stacks-01-collapsed-all.txt",
               "folded/flamegraph-perf-numa-stacks-01-collapsed-tid.txt"],
    "ghc-hp": ["ghc-hp/ghc-7.10.3-startstopfrp-example-h-2016-09-26.hp.gz",
               "ghc-hp/ghc-7.10.3-startstopfrp-example-h-2016-09-27.hp.gz"],
    "julia-mem": ["julia-mem/gvfn-LinearRL.jl.mem", "julia-mem/gvfn-test.jl.mem"],
    "perf script": ["perf/script/firefox-profiler-simple-perf.txt.gz",
                    "perf/script/firefox-profiler-test.perf.gz"],
}


@pytest.mark.slow
def test_report_of_every_format_renders_without_errors(tmp_path):
    sync_api = _browser()
    pages = {}
    for label, args in FORMAT_PAIRS.items():
        out = tmp_path / (label.replace(" ", "_").replace(",", "") + ".html")
        argv = [a if a.startswith("--") else str(DATA / a) for a in args]
        assert main(["report", *argv, "-o", str(out)]) == 0, label
        pages[label] = (out, embedded(out.read_text(encoding="utf-8")))
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for label, (out, doc) in pages.items():
                page = browser.new_page()
                errors: list[str] = []
                page.on("console", lambda m, e=errors: e.append(m.text)
                        if m.type == "error" else None)
                page.on("pageerror", lambda x, e=errors: e.append(str(x)))
                page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                           else r.abort())
                page.goto(out.as_uri())
                page.wait_for_selector("body[data-ready='1']")
                rows = doc["changes"]["rows"]
                if rows:
                    first = page.locator("#changes tbody tr").first.locator("td").nth(2)
                    assert first.inner_text() == rows[0]["name"], label
                else:  # run statistics: totals only
                    assert "no per-row costs" in page.inner_text("#change-count"), label
                assert page.locator("#totals tr").count() == len(doc["totals"]) + 1, label
                frames = page.locator("#flame .fr").count()
                assert (frames > 0) == (doc["flame"] is not None), label
                assert errors == [], (label, errors)
                page.close()
        finally:
            browser.close()


def test_heap_pair_report_says_not_judged_in_chromium(tmp_path):
    """Two heap profiles, one run per side: the verdicts are "not judged", shown grey and
    italic as the hint explains, and the verdict filter lists them."""
    sync_api = _browser()
    hp = Path(__file__).resolve().parents[1] / "data" / "ghc-hp"
    out = tmp_path / "hp.html"
    assert main(["report", str(hp / "hs-ad-v1.hp"), str(hp / "hs-ad-v2.hp"), "-o",
                 str(out)]) == 0
    doc = embedded(out.read_text(encoding="utf-8"))
    n = doc["changes"]["verdict_counts"]["not judged"]
    assert n > 0 and "real" not in doc["changes"]["verdict_counts"]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(out.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.select_option("#verdict-filter", "not judged")
            cells = page.locator("#changes tbody tr td:nth-child(2)")
            assert set(cells.all_inner_texts()) == {"not judged"} and cells.count() == n
            style = cells.first.evaluate("e => getComputedStyle(e).fontStyle")
            assert style == "italic"
            assert "not judged" in page.locator(".hint").first.inner_text()
        finally:
            browser.close()
