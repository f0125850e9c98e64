"""GHC .prof rows with non-ASCII names stay on the vectorised path and read the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers import ghc_prof

SRC = Path(__file__).resolve().parent.parent / "data" / "hs-ad" / "v1" / "ad.P.prof"
SWAP = str.maketrans({"a": "λ", "o": "ö", "s": "ß", "e": "⊕"})  # one char for one char


def _non_ascii_copy(dst: Path, every: int) -> int:
    """``SRC`` with the names of every ``every``-th tree row made non-ASCII (same width in
    characters, as GHC pads); returns how many rows changed."""
    lines = SRC.read_text(encoding="utf-8").split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("MAIN "))
    changed = 0
    for i in range(start + 1, len(lines), every):
        ln = lines[i]
        body = ln.lstrip(" ")
        if not body:
            continue
        name, rest = body.split(" ", 1)
        new = name.translate(SWAP)
        if new != name:
            lines[i] = ln[: len(ln) - len(body)] + new + " " + rest
            changed += 1
    dst.write_text("\n".join(lines), encoding="utf-8")
    return changed



def _count_line_parser(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the rows handed to the per-line parser (``{"n": rows}``, updated live)."""
    calls = {"n": 0}
    real = ghc_prof._parse_line

    def counting(*a, **k):
        calls["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(ghc_prof, "_parse_line", counting)
    return calls


def test_non_ascii_rows_read_like_the_line_parser(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    dst = tmp_path / "u.prof"
    changed = _non_ascii_copy(dst, 7)
    assert changed > 20
    calls = _count_line_parser(monkeypatch)
    fast = ghc_prof.read(dst)
    assert calls["n"] < changed // 4  # the shifted rows did not fall to the line parser
    monkeypatch.setattr(ghc_prof, "_layout_from_sample", lambda *a, **k: None)
    slow = ghc_prof.read(dst)  # every row through the per-line parser
    assert fast.n_nodes == slow.n_nodes
    assert fast.name.tolist() == slow.name.tolist()
    assert "λ" in "".join(fast.frames.name.tolist())
    for m in fast.metrics:
        assert np.array_equal(fast.values[m.name], slow.values[m.name]), m.name
    assert np.array_equal(fast.parent, slow.parent)
    # the copy renames tree rows but not GHC's summary table above them, so both paths
    # must reach the same completeness verdict (the summary no longer matches the tree)
    assert (fast.incomplete, fast.incomplete_reason) == (slow.incomplete, slow.incomplete_reason)


REAL = Path(__file__).resolve().parent.parent / "data" / "ghc-prof" / (
    "ghc-9.x-inferno-utf8-names-N32-P-2023-08.prof")  # real GHC 9 -P report, CJK names


def test_real_cjk_report_fast_path_equals_line_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real report's CJK rows (3-byte characters, so 8 bytes of shift for a 4-character
    name) are read by the column parser, value for value as the line parser reads them,
    and agree with GHC's own flat table above the tree."""
    lines = REAL.read_text(encoding="utf-8").split("\n")
    tree_at = next(i for i, ln in enumerate(lines) if "no." in ln and "entries" in ln)
    shifted = [ln for ln in lines[tree_at + 1 :] if ln.strip() and not ln.isascii()]
    assert len(shifted) == 5
    calls = _count_line_parser(monkeypatch)
    fast = ghc_prof.read(REAL)
    assert calls["n"] == 0  # every row, the CJK ones too, went through the column parser
    slow = ghc_prof.read(REAL, fast=False)
    assert calls["n"] == fast.n_nodes == 14
    assert fast.name.tolist() == slow.name.tolist()
    assert fast.module.tolist() == slow.module.tolist()
    assert fast.src.tolist() == slow.src.tolist()
    assert np.array_equal(fast.parent, slow.parent)
    for m in fast.metrics:
        a, b = fast.values[m.name], slow.values[m.name]
        assert a.dtype == b.dtype and np.array_equal(a, b), m.name
    assert (fast.incomplete, fast.warnings) == (slow.incomplete, slow.warnings)
    # GHC's flat table: 你好世界 Lib src/Lib.hs:(14,1)-(15,41) 97.4 100.0 19317 90486357376
    cc = fast.name == "你好世界"
    assert int(fast.values["ticks"][cc].sum()) == 19317
    assert int(fast.values["bytes"][cc].sum()) == 90_486_357_376
    assert int(fast.values["entries"][fast.name == "一二三"][0]) == 1
    assert fast.src[fast.name == "一些函数"].tolist() == ["src/Lib.hs:8:1-10"]
