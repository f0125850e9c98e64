"""speedscope JSON reader (``*.speedscope.json``: py-spy, rbspy, stackprof, samply,
pyinstrument, dotnet-trace, speedscope's own export).

The file (schema ``https://www.speedscope.app/file-format-schema.json``) holds
``shared.frames`` (``name``, optional ``file``, ``line``, ``col``) and ``profiles``, each
``{"type", "name", "unit", "startValue", "endValue", ...}`` with a ``unit`` among
``nanoseconds``, ``microseconds``, ``milliseconds``, ``seconds``, ``bytes``, ``none``:

* ``sampled``: ``samples`` (stacks of frame indices, root first) and ``weights``;
* ``evented``: ``events`` ``{"type": "O"|"C", "frame", "at"}``; between two events the
  weight goes to the frame on top of the stack, as speedscope does (a close must match
  the top frame; ``at`` never goes back).

Both are real call stacks, so the result is a call tree (``TreeBuilder``; identical
stacks merge).  Frames are ``name``, ``module`` = ``file``, ``line``; ``src`` =
``file:line``; but py-spy's ``line`` is the line running when sampled, so its frames are
read per function (``src`` = ``file``, :attr:`_Reader.sampled_lines`).

Several profiles (py-spy writes one per thread): by default (``profile="all"``) their
stacks are merged into one tree (thread ids change every run, so a per-thread root would
never align across runs); ``profile=N`` (0-based) or ``profile=NAME`` reads one.
``meta["profiles"]`` lists them all with their weights; :func:`read_each` gives one
Profile per profile.  Profiles whose unit kind differs from the first chosen one are
left out with a warning.

Metrics: time units are converted to seconds: ``self_time_s`` / ``total_time_s``;
``bytes``: ``self_bytes`` / ``total_bytes``; ``none``: ``self_weight`` /
``total_weight``; sampled profiles add ``self_samples`` / ``total_samples`` (sample
counts).  ``meta["unit"]`` is the file's unit.  Sampled metrics are ``sampled=True``;
evented durations are measured, not sampled: in time units they are ``timed`` (two
runs of one program differ and one run tells not by how much).  ``totals``: the sum of the weights
(sampled: empty-stack samples included; evented: time with a frame open); ``meta["profiles"][i]["speedscope_total"]`` is the total speedscope
itself shows (``max(endValue - startValue, weights or last event)``, file unit).

Bad input: invalid (or cut) JSON gives a ParseError with the line and column; a bad
frame index, a mismatched close or a negative weight names the JSON path (``lenient``:
skipped with a warning).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from .builder import TreeBuilder, self_and_total
from .detect import read_bytes
from .errors import ParseError
from .model import Profile, Unit

FORMAT = "speedscope"
DESCRIPTION = "speedscope JSON (sampled and evented profiles)"
SCHEMA = b"speedscope.app/file-format-schema.json"

_TIME = {"nanoseconds": 1e-9, "microseconds": 1e-6, "milliseconds": 1e-3, "seconds": 1.0}
_KINDS = {**{u: ("time_s", Unit.SECONDS, "time") for u in _TIME},
          "bytes": ("bytes", Unit.BYTES, "bytes"), "none": ("weight", Unit.COUNT, "weight")}


def sniff(head: bytes, path: Path) -> float:
    """The ``$schema`` URL decides; a ``.speedscope.json`` name with a JSON object helps."""
    start = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
    if start != b"{":
        return 0.0
    if SCHEMA in head:
        return 1.0
    return 0.6 if Path(path).name.endswith(".speedscope.json") else 0.0


class _Reader:
    def __init__(self, path: Path, doc: Any, lenient: bool) -> None:
        self.path = path
        self.lenient = lenient
        self.warnings: list[str] = []
        if not isinstance(doc, dict) or not isinstance(doc.get("profiles"), list):
            self.fail("a speedscope file: a JSON object with a 'profiles' list", "$")
        if not doc["profiles"]:
            self.fail("at least one profile", "$.profiles", [])
        shared = doc.get("shared")
        frames = shared.get("frames") if isinstance(shared, dict) else None
        if not isinstance(frames, list):
            self.fail("'shared.frames', a list of frames", "$.shared")
        self.doc = doc
        self.frames: list[dict] = frames

    def fail(self, expected: str, where: str, found: Any = None) -> NoReturn:
        raise ParseError(self.path, f"{expected} (at {where})",
                         found=None if found is None else repr(found)[:80])

    def problem(self, expected: str, where: str, found: Any = None) -> None:
        """A bad value: an error, or (lenient) a warning and the item is skipped."""
        if not self.lenient:
            self.fail(expected, where, found)
        self.warnings.append(f"{where}: expected {expected}, found {found!r:.80}: skipped")

    def number(self, v: Any, where: str) -> float:
        if isinstance(v, str):  # dotnet-trace writes startValue/endValue as strings
            try:
                f = float(v)
            except ValueError:
                f = math.nan
            else:
                self.warnings.append(f"{where} is a string ({v!r}); read as a number")
        else:
            f = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan
        if not math.isfinite(f):
            self.fail("a number", where, v)
        return f

    @property
    def sampled_lines(self) -> bool:
        """Whether a frame's ``line`` is the line running when the sample was taken (py-spy,
        unless recorded with ``--function``), not where its function starts.

        Why it matters: such frames are one function at many lines (a caller's frame at
        each of its call sites), so a function became several sibling rows, matched
        across runs by their order among themselves: two py-spy runs of one program
        had 70 of 31,606 tree rows in both.  Their frames are read per function
        (``name``, ``file``), as py-spy's own ``--nolineno`` does."""
        return str(self.doc.get("exporter") or "").startswith("py-spy")

    def frame_ids(self, b: TreeBuilder) -> list[int]:
        per_function = self.sampled_lines
        out = []
        for i, fr in enumerate(self.frames):
            if not isinstance(fr, dict) or not isinstance(fr.get("name"), str):
                self.fail("a frame object with a 'name' string", f"$.shared.frames[{i}]", fr)
            f, ln = fr.get("file"), fr.get("line")
            file = f if isinstance(f, str) else ""
            line = ln if isinstance(ln, int) and not isinstance(ln, bool) else 0
            if per_function:
                line = 0
            src = f"{file}:{line}" if file and line else file
            out.append(b.frame(fr["name"], file, src, line, "frame"))
        return out

    # ----- one profile into the builder -------------------------------------------------
    def add(self, b: TreeBuilder, fids: list[int], i: int, prof: dict, scale: float,
            base: str) -> dict:
        where = f"$.profiles[{i}]"
        kind = prof.get("type")
        start = self.number(prof.get("startValue", 0), f"{where}.startValue")
        end = self.number(prof.get("endValue", 0), f"{where}.endValue")
        if kind == "sampled":
            got, n, last = self.sampled(b, fids, where, prof, scale, base)
            shown = max(end - start, got)
        elif kind == "evented":
            got, last = self.evented(b, fids, where, prof, scale, base, start, end)
            n = None
            shown = max(end - start, last - start)
        else:
            self.fail("a profile of type 'sampled' or 'evented'", f"{where}.type", kind)
        info = {"index": i, "name": str(prof.get("name", "")), "type": kind,
                "unit": prof.get("unit"), "startValue": start, "endValue": end,
                "weight": got, "speedscope_total": shown}
        if n is not None:
            info["samples"] = n
        return info

    def sampled(self, b, fids, where, prof, scale, base) -> tuple[float, int, float]:
        samples, weights = prof.get("samples"), prof.get("weights")
        if not isinstance(samples, list) or not isinstance(weights, list):
            self.fail("'samples' and 'weights' lists", where)
        if len(samples) != len(weights):
            self.fail(f"as many weights as samples ({len(samples)})", f"{where}.weights",
                      len(weights))
        stacks: dict[tuple, list[float]] = {}
        good: list[float] = []
        n = len(fids)
        for j, (st, w) in enumerate(zip(samples, weights, strict=True)):
            if not isinstance(st, list) or not all(
                    isinstance(k, int) and 0 <= k < n for k in st):
                self.problem(f"a stack of frame indices below {n}", f"{where}.samples[{j}]", st)
                continue
            if not isinstance(w, int | float) or not w >= 0:
                self.problem("a non-negative weight", f"{where}.weights[{j}]", w)
                continue
            good.append(w)
            cell = stacks.get(tuple(st))
            if cell is None:
                stacks[tuple(st)] = [w, 1]
            else:
                cell[0] += w
                cell[1] += 1
        for st, (w, c) in stacks.items():
            if st:  # an empty stack is idle time: in the total, on no frame
                b.add_stack([fids[k] for k in st], **{f"self_{base}": w * scale,
                                                      "self_samples": c})
        total = math.fsum(good)
        return total, len(good), total

    def evented(self, b, fids, where, prof, scale, base, start, end) -> tuple[float, float]:
        events = prof.get("events")
        if not isinstance(events, list):
            self.fail("an 'events' list", where)
        stack: list[tuple[int, int]] = []  # (node, frame index)
        last = start
        spans: list[float] = []
        col = f"self_{base}"
        for j, ev in enumerate(events):
            at = self.number(ev.get("at") if isinstance(ev, dict) else None,
                             f"{where}.events[{j}].at")
            k = ev.get("frame")
            if not isinstance(k, int) or not 0 <= k < len(fids):
                self.problem(f"a frame index below {len(fids)}", f"{where}.events[{j}].frame", k)
                continue
            if at < last:
                self.problem(f"an 'at' not before the previous event's ({last})",
                             f"{where}.events[{j}].at", at)
                continue
            if stack and at > last:
                b.add_values(stack[-1][0], **{col: (at - last) * scale})
                spans.append(at - last)
            last = at
            typ = ev.get("type")
            if typ == "O":
                parent = stack[-1][0] if stack else -1
                stack.append((b.child(parent, fids[k]), k))
            elif typ == "C":
                if not stack or stack[-1][1] != k:
                    top = self.frames[stack[-1][1]].get("name") if stack else "nothing"
                    self.problem(f"a close of the frame on top ({top!r})",
                                 f"{where}.events[{j}]", ev)
                    _close_through(stack, k)  # lenient: frames left open above it close too
                    continue
                stack.pop()
            else:
                self.problem("an event of type 'O' or 'C'", f"{where}.events[{j}].type", typ)
        if stack:
            close = max(end, last)
            self.warnings.append(f"{where}: {len(stack)} frame(s) never closed; closed at "
                                 f"{close} (endValue)")
            b.add_values(stack[-1][0], **{col: (close - last) * scale})
            spans.append(close - last)
            last = close
        return math.fsum(spans), last


def _close_through(stack: list[tuple[int, int]], k: int) -> None:
    """Pop frames down to and including the innermost open ``k`` (if it is open)."""
    for depth in range(len(stack) - 1, -1, -1):
        if stack[depth][1] == k:
            del stack[depth:]
            return


def _choose(doc: dict, profile: int | str | None, path: Path) -> list[int]:
    profiles = doc["profiles"]
    if profile is None or profile == "all":
        return list(range(len(profiles)))
    if isinstance(profile, int) or str(profile).isdigit():
        i = int(profile)
        if 0 <= i < len(profiles):
            return [i]
    names = [p.get("name") for p in profiles if isinstance(p, dict)]
    if profile in names:
        return [names.index(profile)]
    raise ParseError(path, f"a profile index 0..{len(profiles) - 1} or name among "
                     f"{names[:10]} (option profile)", found=str(profile))


def _load_json(path: Path) -> Any:
    data = read_bytes(path)
    if not data.strip():
        raise ParseError(path, "a speedscope JSON file", found="an empty file")
    text = data.decode("utf-8-sig", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        cut = e.pos >= len(text.rstrip()) - 1 or e.msg.startswith("Unterminated string")
        raise ParseError(path, f"valid JSON at column {e.colno}"
                         + (" (the file ends early: it was cut)" if cut else ""),
                         line=e.lineno, found=e.msg) from None
    except RecursionError:
        raise ParseError(path, "JSON nested less deeply", found="too deep") from None


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    profile: int | str | None = None,
    **_options: Any,
) -> Profile:
    """Read a speedscope file: every profile merged (default) or one (``profile=``)."""
    p = Path(path)
    doc = _load_json(p)
    r = _Reader(p, doc, lenient)
    return _build(r, p, _choose(doc, profile, p), progress)


def read_each(path: Path, *, lenient: bool = False, **_options: Any) -> list[Profile]:
    """One Profile per profile of the file (one run each)."""
    p = Path(path)
    doc = _load_json(p)
    return [_build(_Reader(p, doc, lenient), p, [i], None) for i in range(len(doc["profiles"]))]


def _build(r: _Reader, p: Path, chosen: list[int], progress) -> Profile:
    profiles = r.doc["profiles"]
    units = [str(pr.get("unit")) if isinstance(pr, dict) else "" for pr in profiles]
    for i in chosen:
        if units[i] not in _KINDS:
            r.fail(f"a unit among {sorted(_KINDS)}", f"$.profiles[{i}].unit", units[i])
    base, unit, label = _KINDS[units[chosen[0]]] if chosen else ("weight", Unit.COUNT, "weight")
    keep = [i for i in chosen if _KINDS[units[i]][0] == base]
    for i in set(chosen) - set(keep):
        r.warnings.append(f"profile {i} ({units[i]}) left out: its unit is not {label}")
    # evented durations are measured once: timed (identical runs differ, no sampling model)
    s, t = self_and_total(base, unit, label, sampled=False, timed=unit is Unit.SECONDS)
    ss, ts = self_and_total("samples", Unit.SAMPLES, "samples", sampled=True)
    is_sampled = any(profiles[i].get("type") == "sampled" for i in keep)
    if is_sampled:
        s, t = self_and_total(base, unit, label, sampled=True)
    b = TreeBuilder([s.name, ss.name])
    fids = r.frame_ids(b)
    infos = []
    for n, i in enumerate(keep):
        scale = _TIME.get(units[i], 1.0)
        infos.append(r.add(b, fids, i, profiles[i], scale, base))
        if progress:
            progress((n + 1) / max(len(keep), 1))
    metrics = [s, t, ss, ts] if is_sampled else [s, t]
    inclusive = {t.name: s.name, ts.name: ss.name} if is_sampled else {t.name: s.name}
    weight = math.fsum(x["weight"] * _TIME.get(x["unit"], 1.0) for x in infos)
    totals = {s.name: weight}
    if is_sampled:
        totals[ss.name] = sum(x.get("samples", 0) for x in infos)
    meta = {"exporter": r.doc.get("exporter"), "name": r.doc.get("name"),
            "frames": "per function: the lines are where samples were taken, not where "
                      "functions start" if r.sampled_lines else "per file line",
            "unit": units[keep[0]] if keep else None, "profiles": infos,
            "active_profile_index": r.doc.get("activeProfileIndex"),
            "chosen": keep, "profile_count": len(profiles)}
    return b.build(path=str(p), format=FORMAT, metrics=metrics, inclusive=inclusive,
                   meta=meta, totals=totals, total_metrics={k: m for k, m in
                                                            ((s.name, s), (ss.name, ss))
                                                            if k in totals},
                   warnings=tuple(dict.fromkeys(r.warnings)), default_metric=s.name,
                   display_metrics=(s.name, t.name))
