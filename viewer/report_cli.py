"""``profdiff report``: the comparison as one self-contained HTML page or as Markdown.

Same runs and options as ``profdiff diff`` (rules, ``--auto-match``, groups, metrics);
the content is :func:`viewer.export.report_data.report_document`.  ``--fail-if`` is
evaluated and shown in the report, and crossing a gate exits 1 as ``diff`` does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .options import UsageError, add_session_options, spec_from_args, view_from_args

if TYPE_CHECKING:
    from .gate import Gate
    from .session import Session
    from .view_state import ViewState

DESCRIPTION = ("Write the comparison of BASE with NEW (and more runs) as one self-contained "
               "HTML file (totals, ranked changes with verdicts, differential flame graph, "
               "diff tree, warnings) or, with --markdown or -o X.md, as GitHub Markdown.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session_options(p)
    g = p.add_argument_group("report")
    g.add_argument("-o", "--output", metavar="OUT",
                   help="file to write (default: stdout); a .md name means --markdown")
    g.add_argument("--markdown", action="store_true", help="GitHub-flavoured Markdown")
    g.add_argument("--max-frames", type=int, default=20_000, metavar="N",
                   help="flame graph / tree: keep at most N frames, pruning the narrowest "
                   "(the page says how many; default 20000)")
    g.add_argument("--allow-mixed-formats", action="store_true",
                   help="compare runs of different formats")
    g.add_argument("--fail-if", action="append", metavar="EXPR",
                   help="as in 'profdiff diff': shown in the report; exit 1 when crossed")
    g.add_argument("--allow-incomplete", action="store_true",
                   help="let --fail-if judge incomplete runs (as in 'profdiff diff'; "
                   "without it the report says the gate was not judged and exits 2)")


def run(args: argparse.Namespace) -> int:
    from .gate import parse_gate
    from .session import Session

    gates = [parse_gate(g) for g in args.fail_if or []]
    spec = spec_from_args(args, "flat")
    if not spec.grouped and len(spec.files) < 2:
        raise UsageError("report needs at least two files: BASE NEW [MORE...] "
                         "(or --base A1 A2 --new B1 B2 for repeated runs)")
    session = Session.open(spec)
    from .diff_cli import refuse_mixed_formats

    refuse_mixed_formats(session, args.allow_mixed_formats)
    markdown = args.markdown or bool(args.output and args.output.lower().endswith(".md"))
    rc = write_report(session, args.output, gates, view_from_args(args), markdown=markdown,
                      max_frames=args.max_frames, allow_incomplete=args.allow_incomplete)
    if rc == 2:
        from .diff_cli import incomplete_gate_error

        print(f"profdiff: error: {incomplete_gate_error(session.main)}", file=sys.stderr)
    return rc


def write_report(session: Session, out: str | None, gates: Sequence[Gate],
                 view: ViewState | None = None, *, markdown: bool = False,
                 max_frames: int = 20_000, allow_incomplete: bool = False) -> int:
    """Write the report of ``session`` to ``out`` (None/"-": stdout); the exit code of
    its gates as ``diff`` gives it: 1 crossed, 2 not judged (an incomplete run), else 0.
    ``profdiff diff --report`` calls this too."""
    from .export.report_data import report_document

    doc = report_document(session, gates, view, max_frames=max_frames,
                          allow_incomplete=allow_incomplete)
    if markdown:
        from .export.markdown_report import render_markdown

        text = render_markdown(doc)
    else:
        from .export.html_report import render_html

        text = render_html(doc)
    if not out or out == "-":
        sys.stdout.write(text)
    else:
        try:
            with open(out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise UsageError(f"{out}: cannot write the report ({e.strerror or e})") from None
    gate = doc["fail_if"]
    if gate and gate["failed"] is None:
        return 2
    return 1 if gate and gate["failed"] else 0
