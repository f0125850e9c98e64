"""The comparison report as GitHub-flavoured Markdown: a pull-request comment or
``$GITHUB_STEP_SUMMARY``.  Totals, the top changes with their verdicts and the
``--fail-if`` result, kept under :data:`MAX_BYTES` (GitHub truncates long comments)."""

from __future__ import annotations

from typing import Any

MAX_BYTES = 60_000
TOP = 10


def _cell(text: Any) -> str:
    """A table cell: pipes escaped, no line breaks, and at most 120 characters."""
    s = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    s = s.replace("`", "'")
    return s if len(s) <= 120 else s[:117] + "..."


def _table(head: list[str], rows: list[list[str]], align: str = "") -> list[str]:
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(":---" if align[i:i + 1] == "l" else "---:" for i in range(len(head)))
           + "|"]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return out


def _pct(x: float) -> str:
    return f"{x * 100:+.2f} %"


def render_markdown(doc: dict[str, Any], top: int = TOP) -> str:
    runs = doc["runs"]
    base, new = runs[doc["baseline"]], runs[doc["current"]]
    out = [f"## profdiff: `{_cell(_run_name(base))}` → `{_cell(_run_name(new))}`", ""]
    gate = doc.get("fail_if")
    if gate and gate["failed"] is None:
        out += [f"**--fail-if not judged**: {gate['not_judged']}", ""]
    elif gate:
        mark = "❌ failed" if gate["failed"] else "✅ passed"
        out += [f"**--fail-if {mark}** ({', '.join('`' + _cell(e) + '`' for e in gate['expressions'])})",
                ""]
        if gate["violations"]:
            out += _table(["expression", "row", "base", "new", "change"],
                          [[v["expression"], v["label"], _num(v["base"]), _num(v["new"]),
                            _change(v)] for v in gate["violations"][:top]], "ll")
            if len(gate["violations"]) > top:
                out.append(f"\n… and {len(gate['violations']) - top} more")
            out.append("")
    out += ["### Totals", ""]
    out += _table(["total", "base", "new", "Δ", "Δ %"],
                  [[t["label"], t["text"][doc["baseline"]], t["text"][doc["current"]],
                    t["delta_text"], t["rel_text"]] for t in doc["totals"]], "l")
    ch = doc["changes"]
    out += ["", f"### Top {min(top, len(ch['rows']))} changes (culprit first)", ""]
    head = ["#", "verdict", "function", "score"]
    for m in ch["metrics"]:
        head += [f"{ch['labels'][m]} base", f"{ch['labels'][m]} new", f"{ch['labels'][m]} Δ"]
    rows = []
    for r in ch["rows"][:top]:
        fn = f"{r['module']}.{r['name']}" if r["module"] else r["name"]
        row = [str(r["rank"]), r["verdict"], fn, _pct(r["score"])]
        for m in ch["metrics"]:
            t = r["values"][m]["text"]
            row += [t[0], t[1], t[2] + (f" ({t[3]})" if t[3] else "")]
        rows.append(row)
    out += _table(head, rows, "lll")
    out += ["", "Score: the row's own change against the baseline's total. *real*: beyond "
            "precision and, when sampled, significant; *within noise*: sampled, not "
            "significant; *within rounding*: a Δ the rounded values cannot support; "
            "*not judged*: a heap residency (timed) change with one run per side, which "
            "cannot be told from run-to-run noise."]
    notes = doc.get("warnings", []) + doc.get("notes", [])
    if notes:
        out += ["", "### Warnings", ""] + [f"- {w}".replace("\n", " ") for w in notes[:20]]
    text = "\n".join(out) + "\n"
    while len(text.encode()) > MAX_BYTES and top > 1:  # very long names: fewer rows
        return render_markdown(doc, top // 2)
    return text


def _run_name(run: dict[str, Any]) -> str:
    """``old (v1/x.prof)`` when the user labelled the run, else its path."""
    label, path = run.get("label"), run["path"]
    return f"{label} ({path})" if label and not path.endswith(label) else path


def _num(v: Any) -> str:
    return "" if v is None else f"{v:,.6g}"


def _change(v: dict) -> str:
    c = v.get("change")
    if c is None:
        return "new" if not v.get("base") else ""
    return f"{c:+.2f} %" if v.get("relative") else f"{c:+,.6g}"
