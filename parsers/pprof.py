"""pprof ``profile.proto`` reader: Julia (PProf.jl CPU and ``Allocs``) and Go profiles.

The file is a ``perftools.profiles.Profile`` protobuf, gzip-compressed on disk by
convention (PProf.jl sometimes writes it raw even under a ``.pb.gz`` name, so both are
accepted).  Decoding is done by the ``protobuf`` runtime with the module generated from
``parsers/proto/profile.proto`` - never by hand - so every producer's field order,
packed/unpacked repeated fields and unknown extensions are handled the way Google's own
tools handle them.

Model
-----
* One call tree per profile, root -> leaf.  ``sample.location_id`` is leaf first; a
  location with several ``line`` entries stands for inlined calls (``line[0]`` is the
  innermost callee, the last line the caller it was inlined into), so it becomes several
  frames.  Samples with identical stacks are merged before they reach the tree builder,
  which keeps loading proportional to the number of *distinct* stacks.
* Frames (``granularity="functions"``, the default, like pprof's own default):
  ``name`` = ``Function.name`` (``system_name`` when the name is empty, the hex address
  for unsymbolised locations), ``module`` = the base name of the source file (base name,
  not the path, so the same program profiled on two machines - ``/home/a/x.go`` vs
  ``/pprof/x.go`` - aligns), ``line`` = the function's start line, ``src`` =
  ``"<full path>:<start line>"``; there is one frame per (module, name) - Julia has one
  ``Function`` per method, and same-named siblings could not be aligned - taking src and
  line from the first method seen.  With ``granularity="lines"`` every source line of a
  function is its own frame (``line``/``src`` are the sampled line).  Julia's anonymous
  functions carry gensym numbers (``var"#967#969"``) that change between builds, so
  ``FrameTable.match`` holds the name with ``#<digits>`` replaced by ``#`` (plus
  ``":<line>"`` with ``granularity="lines"``, where the line is part of the identity),
  and frames are merged on that identity, so no node has two children with one key.  PProf.jl's ``Alloc: <Type>`` leaf frames get ``kind="alloc"``.
* Metrics: one ``self_<T>`` (SELF) / ``total_<T>`` (INCLUSIVE) pair per sample type,
  where ``<T>`` is the normalised sample type:

  ==========================  =========================  =====================
  sample type / unit          ``<T>``                    producer
  ==========================  =========================  =====================
  ``allocs`` / count          ``alloc_count``            Julia ``PProf.Allocs``
  ``size`` / bytes            ``alloc_bytes``            Julia ``PProf.Allocs``
  ``events`` / count          ``samples``                Julia CPU (``PProf.pprof``)
  ``stack_depth`` / count     ``stack_depth``            Julia CPU (older PProf.jl)
  ``samples`` / count         ``samples``                Go CPU
  ``cpu`` / nanoseconds       ``cpu_ns``                 Go CPU
  ``alloc_objects`` / count   ``alloc_objects``          Go heap
  ``alloc_space`` / bytes     ``alloc_space_bytes``      Go heap
  ``inuse_objects`` / count   ``inuse_objects``          Go heap
  ``inuse_space`` / bytes     ``inuse_space_bytes``      Go heap
  anything else               ``<type>`` + ``_bytes`` / ``_ns`` / ``_s`` / ``_<unit>``
  ==========================  =========================  =====================

  Julia's ``events`` is the number of CPU samples, hence the same name as Go's and perf's
  ``samples``.  Metrics of CPU/wall profiles (``period_type`` cpu/wall, or sample types
  samples/events/cpu/wall/stack_depth) are ``sampled=True``; allocation counts are treated
  as deterministic (every recorded allocation is one sample with its exact size).
  ``default_metric`` is ``self_<T>`` of ``default_sample_type`` or, when unset, of the
  last sample type (the pprof convention).  Option ``sample_type=`` (raw or normalised
  name) overrides it; every sample type is loaded either way.
* ``meta``: ``sample_types`` ([[type, unit, metric base], ...]), ``default_sample_type``,
  ``period_type`` ([type, unit]), ``period``, ``duration_ns``, ``time_nanos`` and ``date``
  (ISO 8601 UTC, when ``time_nanos`` is set), ``drop_frames``, ``keep_frames``,
  ``comments``, ``label_keys`` ({key: unit}), ``mappings`` (file names), ``program``
  (main mapping's base name, Go), ``n_samples``, ``n_locations``, ``n_functions``,
  ``granularity``, ``producer`` (``"julia"``/``"go"``/``""`` guess).
* ``totals``: every metric name -> the sum of that sample type over all samples.
* ``extras["by_type"]``: for allocation profiles with ``type`` labels (or, failing that,
  ``Alloc: <Type>`` leaf frames): ``[{"type", "count", "bytes"}, ...]`` sorted by bytes,
  where count/bytes are the sums of the first count-unit / bytes-unit sample type (the
  ``bytes`` label when there is no bytes sample type, the number of samples when there is
  no count sample type).
* Option ``type_frames=True`` adds an ``Alloc: <Type>`` leaf frame from the ``type`` label
  to samples that do not already end in one (profiles written with PProf.jl's
  ``frame_for_type=false``), so such runs align with ones written with frames.

The pre-protobuf "legacy" formats (gperftools binary CPU profiles, old Go text heap
profiles) are recognised only to say clearly that they are not supported.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .builder import TreeBuilder, self_and_total
from .errors import ParseError
from .gzip_io import cut_offset, read_all, with_cut
from .model import FrameTable, Metric, Profile, Unit

FORMAT = "pprof"
DESCRIPTION = "pprof protobuf profile (Go, Julia PProf.jl)"

_NAME_SUFFIXES = (".pb", ".pb.gz", ".pprof", ".pprof.gz")
_LEGACY_TEXT = (
    b"heap profile:",
    b"heap_v2/",
    b"--- contention",
    b"--- mutex",
    b"--- heapz",
    b"--- threadz",
    b"--- symbol",
    b"contention profile",
    b"cycles/second",
)

# (type, unit) -> metric base name; see the table in the module docstring.
_KNOWN_TYPES: dict[tuple[str, str], str] = {
    ("allocs", "count"): "alloc_count",
    ("size", "bytes"): "alloc_bytes",
    ("events", "count"): "samples",
    ("samples", "count"): "samples",
    ("cpu", "nanoseconds"): "cpu_ns",
}
_UNIT_SUFFIX = {
    "bytes": ("_bytes", Unit.BYTES),
    "nanoseconds": ("_ns", Unit.NANOSECONDS),
    "seconds": ("_s", Unit.SECONDS),
    "count": ("", Unit.COUNT),
}
_SAMPLED_TYPES = {"samples", "events", "cpu", "wall", "stack_depth"}
_GENSYM = re.compile(r"#\d+")


def _proto():
    """The generated module, imported lazily so detection of other formats never needs it."""
    from .proto import profile_pb2

    return profile_pb2


# --------------------------------------------------------------------------------------
# detection
# --------------------------------------------------------------------------------------
def _is_legacy(head: bytes) -> bool:
    """gperftools/legacy Go binary CPU header (words 0, 3, 0, period, 0) or legacy text."""
    if head[:4] == b"\x00\x00\x00\x00":
        if head[4:8] == b"\x03\x00\x00\x00" or head[4:8] == b"\x00\x00\x00\x03":
            return True
        if head[:8] == b"\x00" * 8 and head[8:16] in (
            b"\x03" + b"\x00" * 7, b"\x00" * 7 + b"\x03"
        ):
            return True
    stripped = head.lstrip()
    return any(stripped.startswith(t) for t in _LEGACY_TEXT)


def sniff(head: bytes, path: Path) -> float:
    """Confidence that ``head`` (gunzipped) starts a pprof protobuf.

    A whole profile that fits in the head is parsed for real (``string_table[0] == ""``
    and at least one sample type).  A longer (or truncated) one cannot be parsed from a
    prefix, so the cheap check is: the first byte is a valid field tag of ``Profile``
    (``0x0a`` sample_type, ``0x48`` time_nanos - Go writes that first -, ...) and the
    head holds control bytes no text format has.  That confidence stays modest so text
    formats win, and the name (``.pb``, ``.pb.gz``, ``.pprof``) only breaks ties.  Legacy
    profiles get a low score so that :func:`read` can say they are not supported instead
    of "unknown format".
    """
    if not head:
        return 0.0
    name_bonus = 0.1 if str(path).lower().endswith(_NAME_SUFFIXES) else 0.0
    if _is_legacy(head):
        return 0.2 + name_bonus
    if head[0] not in _FIRST_TAGS or len(head) < 2 or not _CONTROL.search(head[:512]):
        return 0.0  # text (every protobuf has length/tag bytes below 0x20 early on)
    from .detect import HEAD_BYTES

    pb = _proto()
    if len(head) < HEAD_BYTES:  # probably the whole file: parse it
        try:
            prof = pb.Profile.FromString(head)
        except Exception:
            # Not decodable: a truncated gzip (the reader then says where it ends) or a
            # truncated raw profile / some other binary - claimed weakly, so a clear
            # "not a pprof protobuf" beats "unknown format" only when nothing else fits.
            return (0.4 if _gzip_on_disk(path) else 0.1) + name_bonus
        if prof.string_table and prof.string_table[0] == "" and len(prof.sample_type):
            return 0.9
        return 0.0
    return 0.4 + name_bonus


def _gzip_on_disk(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


# Single-byte tags (field << 3 | wire type) of every Profile field with its wire type;
# ``comment`` (13) may be packed (2) or not (0).
_FIRST_TAGS = frozenset(
    [(f << 3) | 2 for f in (1, 2, 3, 4, 5, 6, 11, 13)]
    + [(f << 3) | 0 for f in (7, 8, 9, 10, 12, 13, 14)]
)
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


# --------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------
def _metric_base(typ: str, unit: str) -> tuple[str, Unit]:
    known = _KNOWN_TYPES.get((typ, unit))
    base_unit = _UNIT_SUFFIX.get(unit, (f"_{unit}" if unit else "", Unit.COUNT))
    unit_enum = base_unit[1]
    if typ in ("samples", "events") and unit == "count":
        unit_enum = Unit.SAMPLES
    if known:
        return known, unit_enum
    base = re.sub(r"[^0-9A-Za-z]+", "_", typ).strip("_").lower() or "value"
    suffix = base_unit[0]
    if suffix and not base.endswith(suffix):
        base += suffix
    return base, unit_enum


def _fail(path: Path, expected: str, found: str, lenient: bool, warnings: list[str]) -> None:
    """Raise in strict mode; record a warning in lenient mode."""
    if not lenient:
        raise ParseError(path, expected, found=found)
    warnings.append(f"skipped: expected {expected}, found {found}")


class _Strings:
    """String-table lookups that fail (strict) or warn (lenient) on a bad index.

    Every reference in a pprof profile is an index into one table; a corrupt index must
    name what referred to it, and lenient mode must keep going with ``""``.
    """

    def __init__(self, path: Path, st: list[str], lenient: bool) -> None:
        self.path = path
        self.st = st
        self.n_str = len(st)
        self.lenient = lenient
        self.warnings: list[str] = []

    def __call__(self, i: int, what: str) -> str:
        if 0 <= i < self.n_str:
            return self.st[i]
        _fail(self.path, f"a string table index for {what}", f"index {i} of {self.n_str}",
              self.lenient, self.warnings)
        return ""


@dataclasses.dataclass
class _Header:
    """What the profile-level fields say: the sample types and the metrics they become."""

    types: list[tuple[str, str]]
    period_type: tuple[str, str]
    bases: list[str]
    metrics: list[Metric]
    default_idx: int

    @property
    def self_names(self) -> list[str]:
        return [f"self_{b}" for b in self.bases]


def _decode(path: Path) -> tuple[bytes, str]:
    """The raw protobuf bytes and the gzip cut description (empty when whole).

    Empty files and legacy pre-protobuf profiles are refused here with a clear error,
    before the protobuf runtime would report them as merely "undecodable".
    """
    if path.stat().st_size == 0:
        raise ParseError(path, "a pprof protobuf profile", found="an empty file")
    data, gz_cut = read_all(path)
    if _is_legacy(data[:64]):
        raise ParseError(
            path, "a pprof protobuf profile (legacy pprof format not supported)",
            found="a legacy pre-protobuf profile (gperftools / old Go)",
        )
    return data, gz_cut


def _parse(path: Path, data: bytes, gz_cut: str) -> tuple[Any, list[str]]:
    """Parse the message and check the string table and sample types every step relies on."""
    pb = _proto()
    prof = pb.Profile()
    try:
        prof.ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError
        if gz_cut:  # a protobuf cut mid-message cannot be read in part
            raise ParseError(path, "a complete gzip stream (the protobuf inside is cut)",
                             found=gz_cut, offset=cut_offset(path)) from e
        raise ParseError(
            path, "a pprof protobuf profile (perftools.profiles.Profile)",
            found=f"undecodable protobuf: {e}",
        ) from e
    st = list(prof.string_table)
    if not st or st[0] != "":
        raise ParseError(
            path, "a pprof profile whose string_table starts with an empty string",
            found="no string table" if not st else f"string_table[0] = {st[0]!r}",
        )
    if not len(prof.sample_type):
        raise ParseError(path, "a pprof profile with at least one sample_type",
                         found="no sample types")
    return prof, st


def _read_header(prof: Any, s: _Strings, path: Path, sample_type: str | None) -> _Header:
    """Sample types -> metrics (unique base names) and the default sample type.

    Every sample type is loaded; ``sample_type`` only chooses the default metric, and an
    unknown one is an error naming the types that exist.
    """
    types = [(s(vt.type, "sample_type.type"), s(vt.unit, "sample_type.unit"))
             for vt in prof.sample_type]
    period_type = (s(prof.period_type.type, "period_type.type"),
                   s(prof.period_type.unit, "period_type.unit"))
    cpu_profile = period_type[0] in ("cpu", "wall")
    bases: list[str] = []
    metrics: list[Metric] = []
    for typ, unit in types:
        base, unit_enum = _metric_base(typ, unit)
        b0, k = base, 2
        while base in bases:
            base, k = f"{b0}_{k}", k + 1
        bases.append(base)
        sampled = cpu_profile or typ in _SAMPLED_TYPES
        label = f"{typ} ({unit})" if unit else typ
        metrics.extend(self_and_total(base, unit_enum, label, sampled=sampled))
    n_types = len(types)

    default_type = s(prof.default_sample_type, "default_sample_type")
    default_idx = n_types - 1
    if default_type:
        for i, (typ, _u) in enumerate(types):
            if typ == default_type:
                default_idx = i
                break
    if sample_type is not None:
        for i, (typ, _u) in enumerate(types):
            if sample_type in (typ, bases[i], f"self_{bases[i]}", f"total_{bases[i]}"):
                default_idx = i
                break
        else:
            raise ParseError(
                path, f"a sample type among {[t for t, _ in types]} (option sample_type)",
                found=sample_type,
            )
    return _Header(types, period_type, bases, metrics, default_idx)


class _Frames:
    """Functions and locations -> interned frame ids, root-first per location.

    Locations are interned on first use, so the frame table holds only frames some
    sample reaches; the alignment identity (``FrameTable.match``) is kept beside it.
    """

    def __init__(self, prof: Any, s: _Strings, builder: TreeBuilder, granularity: str,
                 path: Path, lenient: bool) -> None:
        self.intern = builder.frame
        self.granularity = granularity
        self.path = path
        self.lenient = lenient
        self.warnings = s.warnings
        self.functions: dict[int, tuple[str, str, int]] = {}
        for fn in prof.function:
            name = s(fn.name, "function.name") or s(fn.system_name, "function.system_name")
            self.functions[fn.id] = (name, s(fn.filename, "function.filename"),
                                     max(fn.start_line, 0))
        self.mappings = {m.id: s(m.filename, "mapping.filename") for m in prof.mapping}
        self.alloc_types: dict[int, str] = {}  # frame id of an "Alloc: T" frame -> T
        self.by_key: dict[tuple[str, str, str], int] = {}
        self.match_of: dict[int, str] = {}  # frame id -> FrameTable.match
        self.locations = {loc.id: loc for loc in prof.location}
        self.loc_frames: dict[int, tuple[int, ...]] = {}

    def frame_for(self, name: str, file: str, start: int, line: int) -> int:
        """The frame id of one (function, line), merged on the alignment identity."""
        kind = "alloc" if name.startswith("Alloc: ") else ""
        if kind:  # PProf.jl gives these the file "nothing": no source location at all
            file, start, line = "", 0, 0
        module = file.replace("\\", "/").rsplit("/", 1)[-1]
        name = name or "[unknown]"
        ident = _GENSYM.sub("#", name) if "#" in name else name
        if self.granularity == "lines":
            src = f"{file}:{line}" if file and line > 0 else file
            fid = self.intern(name, module, src, line, kind)
            self.match_of[fid] = f"{ident}:{line}"
        else:
            # One frame per alignment key (module + name): Julia emits a Function per
            # method, so "_sort!" in sort.jl comes with many start lines; separate frames
            # would give a node several siblings with the same key, which no diff can
            # align.  The first method seen supplies src/line.
            fid = self.by_key.get((ident, module, kind))
            if fid is None:
                src = f"{file}:{start}" if file and start > 0 else file
                fid = self.by_key[(ident, module, kind)] = self.intern(
                    name, module, src, start, kind)
                self.match_of[fid] = ident
        if kind:
            self.alloc_types[fid] = name[len("Alloc: "):]
        return fid

    def frames_of(self, lid: int) -> tuple[int, ...] | None:
        """Root-first frame ids of a location, interned on first use (so the frame table
        holds only frames some sample reaches); None for an unknown location id."""
        got = self.loc_frames.get(lid)
        if got is not None:
            return got
        loc = self.locations.get(lid)
        if loc is None:
            return None
        fids = []
        for ln in loc.line:  # line[0] innermost ... last = caller
            fn = self.functions.get(ln.function_id)
            if fn is None:
                _fail(self.path, "a function id present in the function table",
                      f"function {ln.function_id} in location {loc.id}", self.lenient,
                      self.warnings)
                fn = (f"[function {ln.function_id}]", "", 0)
            fids.append(self.frame_for(fn[0], fn[1], fn[2], max(ln.line, 0)))
        if not fids:  # unsymbolised: address within its mapping
            fids.append(self.frame_for(f"0x{loc.address:x}",
                                       self.mappings.get(loc.mapping_id, ""), 0, 0))
        got = self.loc_frames[lid] = tuple(reversed(fids))  # root-first
        return got


@dataclasses.dataclass
class _Samples:
    """The samples grouped by distinct stack, with the per-type and label tallies."""

    stacks: list[tuple]
    sums: np.ndarray  # (len(stacks), n_types) summed values per stack
    run_totals: np.ndarray  # (n_types,) sum over the kept samples
    by_type: dict[str, list[int]]
    label_keys: dict[str, str]


def _read_samples(prof: Any, st: list[str], s: _Strings, header: _Header, fr: _Frames,
                  type_frames: bool, progress: Callable[[float], None] | None) -> _Samples:
    """Group identical stacks (one pass over the samples) so the tree builder sees each
    distinct stack once; tally allocation types and label keys on the way."""
    path, lenient, warnings = fr.path, fr.lenient, s.warnings
    lookup = s.__call__  # a bound method: cheaper per label than calling the instance
    types = header.types
    n_types = len(types)
    frames_of = fr.frames_of
    alloc_types = fr.alloc_types
    functions = fr.functions
    label_keys: dict[str, str] = {}
    key_type = st.index("type") if "type" in st else -1
    key_bytes = st.index("bytes") if "bytes" in st else -1
    count_idx = next((i for i, (_t, u) in enumerate(types) if u == "count"), None)
    bytes_idx = next((i for i, (_t, u) in enumerate(types) if u == "bytes"), None)
    by_type: dict[str, list[int]] = {}
    stack_index: dict[tuple, int] = {}
    stacks: list[tuple] = []
    group = np.empty(len(prof.sample), dtype=np.int64)
    vals = np.zeros((len(prof.sample), n_types), dtype=np.int64)
    keep = np.ones(len(prof.sample), dtype=bool)
    n_samples = len(prof.sample)
    step = max(1, n_samples // 20)
    flat_vals: list[int] = []  # values of the kept samples, n_types each
    groups: list[int] = []  # stack group of each kept sample
    # only "Alloc: T" leaf frames carry a type: without such functions no leaf is looked up
    may_alloc = any(f[0].startswith("Alloc: ") for f in functions.values())
    seen_keys: set[int] = set()
    for i, smp in enumerate(prof.sample):
        if progress and i % step == 0:
            progress(0.1 + 0.7 * i / max(n_samples, 1))
        v = smp.value
        if len(v) != n_types:
            _fail(path, f"{n_types} values per sample (one per sample type)",
                  f"{len(v)} values in sample #{i}", lenient, warnings)
            keep[i] = False
            continue
        flat_vals.extend(v)
        typ_label = None
        bytes_label = 0
        for lab in smp.label:
            if lab.key == key_type and lab.str:
                typ_label = lookup(lab.str, "label.str")
            elif lab.key == key_bytes and lab.num:
                bytes_label = lab.num
            if lab.key not in seen_keys and len(label_keys) < 64:  # once per key id
                seen_keys.add(lab.key)
                label_keys.setdefault(lookup(lab.key, "label.key"),
                                      lookup(lab.num_unit, "label.num_unit"))
        locs = tuple(smp.location_id)
        leaf = frames_of(locs[0]) if locs and may_alloc else None
        leaf_type = alloc_types.get(leaf[-1]) if leaf else None
        key: tuple = locs
        if type_frames and typ_label is not None and leaf_type is None:
            key = ("\x00" + typ_label, *locs)  # leaf first, like location_id
        if typ_label is None:
            typ_label = leaf_type
        g = stack_index.get(key)
        if g is None:
            g = len(stacks)
            stack_index[key] = g
            stacks.append(key)
        groups.append(g)
        if typ_label is not None:
            acc = by_type.setdefault(typ_label, [0, 0])
            acc[0] += int(v[count_idx]) if count_idx is not None else 1
            acc[1] += int(v[bytes_idx]) if bytes_idx is not None else bytes_label

    vals[keep] = np.array(flat_vals, dtype=np.int64).reshape(-1, n_types)
    group[keep] = groups
    sums = np.zeros((len(stacks), n_types), dtype=np.int64)
    np.add.at(sums, group[keep], vals[keep])
    run_totals = vals[keep].sum(axis=0) if n_samples else np.zeros(n_types, dtype=np.int64)
    return _Samples(stacks, sums, run_totals, by_type, label_keys)


def _add_stacks(builder: TreeBuilder, fr: _Frames, smp: _Samples, n_types: int,
                self_names: list[str]) -> None:
    """Expand each distinct stack into root-first frame ids and hand them to the builder
    in one call (stacks of unknown locations only are dropped unless they carry cost)."""
    sums = smp.sums
    frame_for, frames_of, intern = fr.frame_for, fr.frames_of, fr.intern
    flat: list[int] = []
    lengths: list[int] = []
    used: list[int] = []
    for g, key in enumerate(smp.stacks):
        frames: list[int] = []
        for lid in reversed(key):
            if isinstance(lid, str):  # synthesised Alloc: frame (type_frames=True)
                frames.append(frame_for("Alloc: " + lid[1:], "", 0, 0))
                continue
            lf = frames_of(lid)
            if lf is None:
                _fail(fr.path, "a location id present in the location table",
                      f"location {lid}", fr.lenient, fr.warnings)
                continue
            frames.extend(lf)
        if not frames:
            if sums[g].any():
                frames = [intern("[no stack]", "", "", 0, "")]
            else:
                continue
        flat.extend(frames)
        lengths.append(len(frames))
        used.append(g)
    kept = sums[np.asarray(used, dtype=np.int64)] if used else np.zeros((0, n_types), np.int64)
    builder.add_stacks(flat, lengths, {m: kept[:, j] for j, m in enumerate(self_names)})


def _meta(prof: Any, s: _Strings, header: _Header, fr: _Frames, smp: _Samples,
          granularity: str) -> dict[str, Any]:
    """Run-level metadata: what the header said plus counts, producer guess and date."""
    types, mappings = header.types, fr.mappings
    files = {f[1] for f in fr.functions.values()}
    producer = ("julia" if any(f.endswith(".jl") for f in files)
                else "go" if any(f.endswith(".go") for f in files) else "")
    meta: dict[str, Any] = {
        "sample_types": [[t, u, b] for (t, u), b in zip(types, header.bases, strict=True)],
        "default_sample_type": types[header.default_idx][0],
        "period_type": list(header.period_type),
        "period": int(prof.period),
        "duration_ns": int(prof.duration_nanos),
        "time_nanos": int(prof.time_nanos),
        "drop_frames": s(prof.drop_frames, "drop_frames"),
        "keep_frames": s(prof.keep_frames, "keep_frames"),
        "comments": [s(c, "comment") for c in prof.comment],
        "label_keys": smp.label_keys,
        "mappings": [mappings[m] for m in mappings],
        "n_samples": len(prof.sample),
        "n_locations": len(prof.location),
        "n_functions": len(prof.function),
        "granularity": granularity,
        "producer": producer,
    }
    if prof.time_nanos > 0:
        meta["date"] = datetime.fromtimestamp(prof.time_nanos / 1e9, tz=UTC).isoformat()
    if prof.mapping and mappings[prof.mapping[0].id]:
        meta["program"] = mappings[prof.mapping[0].id].replace("\\", "/").rsplit("/", 1)[-1]
    return meta


def _build(path: Path, builder: TreeBuilder, header: _Header, fr: _Frames, smp: _Samples,
           meta: dict[str, Any], warnings: list[str]) -> Profile:
    """Assemble the profile: totals per metric, the by-type table, and the gensym-free
    alignment identity in ``FrameTable.match`` when it differs from the name."""
    totals: dict[str, float] = {}
    total_metrics: dict[str, Metric] = {}
    for i in range(len(header.types)):
        for m in header.metrics[2 * i : 2 * i + 2]:
            totals[m.name] = int(smp.run_totals[i])
            total_metrics[m.name] = m
    extras: dict[str, Any] = {}
    if smp.by_type:
        extras["by_type"] = [
            {"type": t, "count": c, "bytes": b}
            for t, (c, b) in sorted(smp.by_type.items(),
                                    key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
        ]
    bases = header.bases
    profile = builder.build(
        path=str(path),
        format=FORMAT,
        metrics=header.metrics,
        inclusive={f"total_{b}": f"self_{b}" for b in bases},
        meta=meta,
        totals=totals,
        total_metrics=total_metrics,
        warnings=tuple(warnings),
        extras=extras,
        default_metric=f"self_{bases[header.default_idx]}",
    )
    frames = profile.frames
    names = frames.name.tolist()
    match = [fr.match_of.get(i, n) for i, n in enumerate(names)]
    if match != names:
        profile = dataclasses.replace(profile, frames=FrameTable(
            frames.name, frames.module, frames.src, frames.line, frames.kind,
            np.array(match, dtype=object)))
    return profile


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    sample_type: str | None = None,
    granularity: str = "functions",
    type_frames: bool = False,
    **_options: Any,
) -> Profile:
    """Read a pprof profile into a call tree with one self/total pair per sample type.

    Steps: decode (protobuf + string table), header (sample types -> metrics), body
    (samples grouped by stack, locations -> frames), build (profile assembly).
    """
    path = Path(path)
    data, gz_cut = _decode(path)
    if granularity not in ("functions", "lines"):
        raise ValueError(f"granularity must be 'functions' or 'lines', not {granularity!r}")
    prof, st = _parse(path, data, gz_cut)
    if progress:
        progress(0.1)
    s = _Strings(path, st, lenient)
    header = _read_header(prof, s, path, sample_type)
    self_names = header.self_names
    builder = TreeBuilder(self_names)
    fr = _Frames(prof, s, builder, granularity, path, lenient)
    smp = _read_samples(prof, st, s, header, fr, type_frames, progress)
    _add_stacks(builder, fr, smp, len(header.types), self_names)
    if progress:
        progress(0.9)
    meta = _meta(prof, s, header, fr, smp, granularity)
    profile = _build(path, builder, header, fr, smp, meta, s.warnings)
    if progress:
        progress(1.0)
    return with_cut(profile, gz_cut)
