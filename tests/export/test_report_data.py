"""The report's document: verdicts and the fast value formatter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profdiff.parsers.model import Unit
from profdiff.viewer.export.report_data import REAL, ROUNDING, format_many, verdicts
from profdiff.viewer.session import Session, SessionSpec
from profdiff.viewer.units import format_delta, format_value

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.mark.parametrize("unit", list(Unit))
def test_format_many_writes_what_format_value_writes(unit):
    rng = np.random.default_rng(7)
    for v in (np.round(rng.normal(0, 1e6, 500)), rng.normal(0, 3, 500),
              np.array([0.0, 0.0005, 1234.5678, -2.0, 1e-9, np.nan])):
        assert format_many(v, unit) == [format_value(x, unit) for x in v.tolist()]
        assert format_many(v, unit, delta=True) == [format_delta(x, unit) for x in v.tolist()]


def test_verdicts_of_the_bundled_pair():
    s = Session.open(SessionSpec(files=(str(SAMPLES / "hs-ad-v1.prof"),
                                        str(SAMPLES / "hs-ad-v2.prof"))))
    cmp = s.main
    rk = s.culprits(cmp)
    v = verdicts(cmp, rk.metrics)
    names = list(cmp.name)
    assert v[names.index("evalDelta")] == REAL  # +87 % alloc, beyond every rounding
    # "within rounding": no ranked metric changed beyond its precision, yet some Δ is
    # nonzero (the printed percentages moved within their rounding)
    moved = np.zeros(cmp.n_rows, bool)
    nonzero = np.zeros(cmp.n_rows, bool)
    for m in rk.metrics:
        moved |= cmp.changed_mask(m)
        nonzero |= np.nan_to_num(cmp.delta(m)) != 0
    both = cmp.present.all(axis=1)
    expected = both & ~moved & nonzero
    assert expected.sum() > 5
    assert list(v[expected]) == [ROUNDING] * int(expected.sum())
    assert ROUNDING not in set(v[~expected])
    assert v[names.index("dotD")] == "within noise"  # time −18 % on one run per side


def test_report_takes_the_display_options_of_diff(tmp_path, capsys):
    import json
    import re

    from profdiff.viewer.cli import main

    a, b = str(SAMPLES / "hs-ad-v1.prof"), str(SAMPLES / "hs-ad-v2.prof")
    out = tmp_path / "r.html"
    assert main(["report", a, b, "-o", str(out), "--filter", "Model.",
                 "--metrics", "entries,alloc_bytes"]) == 0
    m = re.search(r'id="profdiff-data">(.*?)</script>', out.read_text(encoding="utf-8"), re.S)
    doc = json.loads(m.group(1))
    rows = doc["changes"]["rows"]
    assert rows and all(r["module"].startswith("Model.") for r in rows)
    assert doc["changes"]["metrics"] == ["entries", "alloc_bytes"]
    # the same rows, in the same order, as 'diff --json' with the same options
    assert main(["diff", a, b, "--json", "--top", "0", "--filter", "Model.",
                 "--metrics", "entries,alloc_bytes"]) == 0
    diff_rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["name"] for r in rows] == [r["name"] for r in diff_rows]


def test_report_does_not_judge_a_cut_run_and_says_so(tmp_path, capsys):
    import json
    import re

    from profdiff.viewer.cli import main

    v1, v2 = SAMPLES / "hs-ad-v1.prof", SAMPLES / "hs-ad-v2.prof"
    data = v2.read_bytes()
    cut = tmp_path / "ad.prof"
    cut.write_bytes(data[: data.index(b"\n", int(len(data) * 0.6)) + 1])  # at a line end
    out = tmp_path / "r.html"
    rc = main(["report", str(v1), str(cut), "--fail-if", "alloc_bytes>+1000%", "-o", str(out)])
    assert rc == 2 and f"{cut} is incomplete" in capsys.readouterr().err
    doc = json.loads(re.search(r'id="profdiff-data">(.*?)</script>',
                               out.read_text(encoding="utf-8"), re.S).group(1))
    assert doc["fail_if"]["failed"] is None and "incomplete" in doc["fail_if"]["not_judged"]
    assert any(w.startswith(f"{cut}: incomplete run") for w in doc["warnings"])
    md = tmp_path / "r.md"
    assert main(["report", str(v1), str(cut), "--fail-if", "alloc_bytes>+1000%", "-o",
                 str(md)]) == 2
    assert "**--fail-if not judged**" in md.read_text(encoding="utf-8")
    # diff --report: the same verdict in the page, diff's own exit code
    assert main(["diff", str(v1), str(cut), "--fail-if", "alloc_bytes>+1000%",
                 "--report", str(out)]) == 2
    assert "not_judged" in out.read_text(encoding="utf-8")
    assert main(["report", str(v1), str(cut), "--fail-if", "alloc_bytes>+1000%", "-o",
                 str(out), "--allow-incomplete"]) in (0, 1)


def test_frame_names_cannot_close_the_data_script(tmp_path):
    """A folded stack whose frame is HTML: the page keeps it as text in the JSON blob."""
    import json
    import re

    from profdiff.viewer.cli import main

    evil = "</script><script>alert(1)</script>"
    a, b = tmp_path / "a.folded", tmp_path / "b.folded"
    a.write_text(f"main;{evil} 10\nmain;work 5\n", encoding="utf-8")
    b.write_text(f"main;{evil} 30\nmain;work 5\n", encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(a), str(b), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert html.count("</script>") == 2  # the data blob's and the code's, nothing else
    doc = json.loads(re.search(r'id="profdiff-data">(.*?)</script>', html, re.S).group(1))
    assert doc["changes"]["rows"][0]["name"] == evil


@pytest.mark.parametrize("pair", [("noise-v1/run1", "noise-v1/run3"), ("v1", "v2")])
def test_the_flame_statuses_are_diff_trees(tmp_path, capsys, pair):
    """The report's flame graph marks each frame as ``diff --tree`` judges that row: two
    runs of one hs-ad binary, none changed (by precision alone it marked 61 of 239 frames
    changed, where the window's diff tree and ``diff --tree`` said none); v1 against v2,
    the same 15 changed, 7 added and 7 removed."""
    import json
    import re
    from collections import Counter

    from profdiff.viewer.cli import main

    hs = Path(__file__).resolve().parents[1] / "data" / "hs-ad"
    a, b = (str(hs / p / "ad.prof") for p in pair)
    out = tmp_path / "r.html"
    assert main(["report", a, b, "-o", str(out)]) == 0
    m = re.search(r'id="profdiff-data">(.*?)</script>', out.read_text(encoding="utf-8"), re.S)
    flame = json.loads(m.group(1))["flame"]
    capsys.readouterr()
    assert main(["diff", "--tree", a, b, "--json", "--top", "0"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert flame["n"] == flame["total_rows"] == len(rows)  # no frame pruned here
    assert Counter(flame["status"]) == Counter(r["status"] for r in rows)
    if pair[0] == "v1":
        assert Counter(flame["status"])["changed"] == 15
    else:
        assert set(flame["status"]) == {"same"}
