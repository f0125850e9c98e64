"""A Julia developer's stray allocation in ``--track-allocation`` files: the real
``gvfn-test.jl.mem``, and a copy (made in ``tmp_path``) whose source gained two header
lines and whose line 31 (``ϕ_t = zeros(numweights)``, 0 bytes) now allocates 32 bytes.
The row must come first, say where it is (its name is only its text), and read as
"changed" from 0, in the CLI and in the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QTextDocument

from profdiff.viewer.cli import main

MEM = Path(__file__).resolve().parents[1] / "data" / "julia-mem" / "gvfn-test.jl.mem"
STRAY = "ϕ_t = zeros(numweights)"


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    lines = MEM.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[30].split() == ["0", "ϕ_t", "=", "zeros(numweights)"]
    lines[30] = f"{32:>9} {lines[30][10:]}"
    (tmp_path / "v1").mkdir()
    (tmp_path / "v2").mkdir()
    a, b = tmp_path / "v1" / MEM.name, tmp_path / "v2" / MEM.name
    a.write_bytes(MEM.read_bytes())
    b.write_text("        - # a new header comment\n        - \n" + "".join(lines),
                 encoding="utf-8")
    return a, b


def test_cli_names_the_line_and_its_move(tmp_path, capsys):
    a, b = _pair(tmp_path)
    assert main(["diff", str(a), str(b), "--top", "3"]) == 0
    out = capsys.readouterr().out
    head = next(x for x in out.splitlines() if x.startswith("#"))
    assert head.split()[:4] == ["#", "name", "line", "status"]
    first = next(x for x in out.splitlines() if x.startswith("1 "))
    assert STRAY in first and "gvfn-test.jl:31 → 33" in first
    assert first.rstrip().endswith("+32 B  from 0") and " changed " in first
    assert "22 same, 1 changed, 0 added, 0 removed" in out


def test_window_shows_the_line_column_and_the_whole_total(make_window, tmp_path):
    a, b = _pair(tmp_path)
    win = make_window()
    win.load_paths([str(a), str(b)])
    win.flush_pending()
    win.show_view("flat")
    m = win.flat.model
    heads = [c.header for c in m.columns]
    assert heads[:4] == [heads[0], "module", "line", "status"]
    assert [m.index(0, i).data() for i in range(4)] == [STRAY, "gvfn-test.jl", "31", "changed"]
    doc = QTextDocument()
    doc.setHtml(win.summary.text())  # the runs header: "+<0.1%" is text, not a tag
    assert "+32 B (+<0.1%)" in doc.toPlainText()


def test_summary_lists_the_line_with_its_place_and_a_share_that_is_not_zero(
        make_window, tmp_path):
    """The Summary's top change is the line, named with where it is, and its share of
    the run (32 B of 343.6 MB) reads "+<0.01%", not "+0.00%" beside "real"."""
    a, b = _pair(tmp_path)
    win = make_window()
    win.load_paths([str(a), str(b)])
    win.flush_pending()
    win.tabs.setCurrentWidget(win.summary_view)
    text = win.summary_view.toPlainText()
    assert "23 source lines: 1 changed" in text
    row = next(x for x in text.splitlines() if STRAY in x)
    assert row.startswith(f"gvfn-test.jl:31 → 33 {STRAY}")  # (HTML folds the two spaces)
    assert "+<0.01%" in text and "+0.00%" not in text
    (mc,) = win.summary_view.summary.changes
    assert [(c.verdict, c.delta) for c in mc.changes] == [("real", 32.0)]
