"""Counts of how readers answer damaged copies of corpus files (issue 18's figures).

    .venv/bin/python tests/bench/damage_counts.py [N_PER_FILE] [SEED]

For every corpus file of tests/fuzz/mutants.py, N_PER_FILE random mutants (truncations
at line ends and bytes, cut gzip streams, byte flips, huge/negative/invalid numbers,
Latin-1 bytes, CRLF, duplicated and dropped lines) are read with the format's reader.
Prints, per format and in total: mutants tried, silent cuts (a truncation that loaded,
unmarked, with numbers that differ from the whole file), internal errors (an exception
that is not one of the project's own errors), and the other verdicts.
"""

from __future__ import annotations

import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mutants import CORPUS, DATA, fingerprint, judge, make, write  # noqa: E402

from parsers import load  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 18
    rng = random.Random(seed)
    by_fmt: dict[str, Counter] = {}
    examples: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (fmt, rel) in enumerate(CORPUS):
            whole = fingerprint(load(DATA / rel))
            c = by_fmt.setdefault(fmt, Counter())
            for k in range(n):
                m = make(rel, fmt, rng)
                d = Path(tmp) / f"{i}-{k}"
                d.mkdir()
                verdict, detail = judge(m, write(m, d), whole, fmt=fmt)
                c["tried"] += 1
                c[verdict] += 1
                if verdict in ("silent", "internal") and len(examples) < 20:
                    examples.append(f"  {verdict}: {rel} {m.kind} ({len(m.data)} bytes) "
                                    f"{detail[:100]}")
    cols = ["tried", "silent", "internal", "marked", "unknown", "error", "same", "changed"]
    print(f"{'format':22s}" + "".join(f"{c:>9s}" for c in cols))
    total = Counter()
    for fmt, c in sorted(by_fmt.items()):
        total.update(c)
        print(f"{fmt:22s}" + "".join(f"{c[k]:9d}" for k in cols))
    print(f"{'total':22s}" + "".join(f"{total[k]:9d}" for k in cols))
    print(f"\nmutants tried: {total['tried']}, silent cuts: {total['silent']}, "
          f"internal errors: {total['internal']}  (seed {seed}, {n} per file)")
    if examples:
        print("\nexamples:")
        print("\n".join(examples))


if __name__ == "__main__":
    main()
