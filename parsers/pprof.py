"""pprof ``profile.proto`` reader: Julia (PProf.jl CPU and ``Allocs``) and Go profiles.

The file is a ``perftools.profiles.Profile`` protobuf, gzip-compressed on disk by
convention (PProf.jl sometimes writes it raw even under a ``.pb.gz`` name, so both are
accepted).  Decoding is done by the ``protobuf`` runtime with the module generated from
``parsers/proto/profile.proto`` - never by hand - so every producer's field order,
packed/unpacked repeated fields and unknown extensions are handled the way Google's own
tools handle them.  The one exception is the samples' *framing* (which bytes of a sample
are its stack, its values, its labels: :mod:`.pprof_wire`), read with numpy so that each
distinct stack, value list and label key is decoded once by the runtime; any layout it
does not know sends the reader to whole ``Sample`` messages.

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
  samples/events/cpu/wall/stack_depth) are ``sampled=True``, and so are those of a Julia
  allocation profile (PProf.jl ``Allocs``: ``Profile.Allocs`` records a random sample of
  the allocations, 10 % by default, and the file does not say the rate) unless the option
  ``alloc_sample_rate=1`` says every allocation was recorded; other allocation counts (Go
  heap profiles) are treated as deterministic.
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
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .builder import TreeBuilder, self_and_total
from .errors import ParseError
from .gzip_io import cut_offset, read_all, with_cut
from .model import FrameTable, Kind, Metric, Profile, Unit

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


@functools.cache
def _raw_sample_profile() -> Any:
    """``Profile`` with ``sample`` declared ``repeated bytes``, derived from the generated
    descriptor at first use.

    Why: an embedded message is a length-delimited field on the wire, so this message reads
    the same bytes with every other field decoded as usual and each sample kept as its own
    encoding.  Samples of a CPU profile repeat (10^6 samples over 10^4 stacks): grouping
    byte-identical samples first lets the protobuf runtime decode each distinct sample
    once, instead of building 10^6 messages and a tuple of location ids per sample.
    """
    from google.protobuf import descriptor_pb2, message_factory

    pb = _proto()
    src = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(src)
    raw = descriptor_pb2.FileDescriptorProto(
        name="profdiff_pprof_raw_samples.proto", package=src.package, syntax=src.syntax,
        dependency=[pb.DESCRIPTOR.name])
    msg = raw.message_type.add()
    msg.CopyFrom(next(m for m in src.message_type if m.name == "Profile"))
    msg.name = "ProfileRawSamples"
    for field in msg.field:
        if field.name == "sample":
            field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
            field.ClearField("type_name")
    pool = pb.DESCRIPTOR.pool
    pool.Add(raw)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{src.package}.ProfileRawSamples"))


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
        # a gzip cut between two fields, before the string table: the reader says so
        return (0.4 + name_bonus) if not prof.string_table and _gzip_on_disk(path) else 0.0
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
    allocations_sampled: bool = False  # a Julia allocation profile read as samples

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


def _undecodable(path: Path, gz_cut: str, e: Exception, data: bytes = b"") -> ParseError:
    """The error for bytes the protobuf runtime refused (a cut gzip says where it ends)."""
    if gz_cut:  # a protobuf cut mid-message cannot be read in part
        return ParseError(path, "a complete gzip stream (the protobuf inside is cut)",
                          found=gz_cut, offset=cut_offset(path))
    cut = _cut_field(data)
    if cut is not None:
        field, start = cut
        return ParseError(path, "a pprof protobuf profile (perftools.profiles.Profile)",
                          offset=len(data),
                          found=f"the end of the file inside a {field} that starts at byte "
                                f"{start:,}: cut short or still being written")
    why = str(e).replace(_raw_sample_profile().DESCRIPTOR.full_name, "perftools.profiles.Profile")
    return ParseError(path, "a pprof protobuf profile (perftools.profiles.Profile)",
                      found=f"undecodable protobuf: {why}")


_PROFILE_FIELDS = {1: "sample_type", 2: "sample", 3: "mapping", 4: "location",
                   5: "function", 6: "string_table", 7: "drop_frames", 8: "keep_frames",
                   9: "time_nanos", 10: "duration_nanos", 11: "period_type", 12: "period",
                   13: "comment", 14: "default_sample_type"}
"""perftools.profiles.Profile's field numbers (profile.proto)."""


def _cut_field(data: bytes) -> tuple[str, int] | None:
    """(the Profile field, its first byte) that runs past the end of ``data``, when the
    message's top level is well formed up to there: the file was cut.  None when the
    top level ends cleanly or is damaged elsewhere (a bad wire type).

    Why walked here: the protobuf runtime says only "Wire format was corrupt" for a
    cut file and for a damaged one alike."""
    pos, n = 0, len(data)
    while pos < n:
        start = pos
        key, pos = _varint_at(data, pos)
        if key is None:
            return ("field key", start) if pos >= 0 else None
        field, wire = key >> 3, key & 7
        name = _PROFILE_FIELDS.get(field, f"field {field}")
        if wire == 0:
            value, pos = _varint_at(data, pos)
            if value is None:
                return (name, start) if pos >= 0 else None
            continue
        if wire == 2:
            size, pos = _varint_at(data, pos)
            if size is None:
                return (name, start) if pos >= 0 else None
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            return None  # groups or wire types 6-7: damaged, not cut
        if pos > n:
            return (name, start)
    return None


def _varint_at(data: bytes, pos: int) -> tuple[int | None, int]:
    """The varint at ``pos`` and the position after it; (None, pos) when the data ends
    inside it, (None, -1) when it is longer than a varint can be (damaged, not cut)."""
    value = shift = 0
    while pos < len(data):
        if shift >= 70:
            return None, -1
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    return None, pos


def _parse(path: Path, data: bytes, gz_cut: str) -> tuple[Any, list[str]]:
    """Parse the message (samples as raw bytes, see :func:`_raw_sample_profile`) and check
    the string table and sample types every step relies on."""
    prof = _raw_sample_profile()()
    try:
        prof.ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError
        raise _undecodable(path, gz_cut, e, data) from e
    st = list(prof.string_table)
    if not st and gz_cut:  # the stream stopped between fields, before the string table
        raise ParseError(path, "a complete gzip stream (the protobuf inside is cut)",
                         found=gz_cut, offset=cut_offset(path))
    if not st or st[0] != "":
        raise ParseError(
            path, "a pprof profile whose string_table starts with an empty string",
            found="no string table" if not st else f"string_table[0] = {st[0]!r}",
        )
    if not len(prof.sample_type):
        raise ParseError(path, "a pprof profile with at least one sample_type",
                         found="no sample types")
    return prof, st


JULIA_ALLOCS_TYPES = [("allocs", "count"), ("size", "bytes")]
"""The sample types (and ``period_type`` heap/bytes) PProf.jl's ``Allocs.pprof`` writes:
one sample per recorded allocation, ``allocs`` = 1 and ``size`` its bytes."""


def is_julia_allocs(types: list[tuple[str, str]], period_type: tuple[str, str]) -> bool:
    """Whether the profile is PProf.jl's export of ``Profile.Allocs``."""
    return types == JULIA_ALLOCS_TYPES and period_type == ("heap", "bytes")


def _allocs_sampled(rate: float | None, path: Path) -> bool:
    """Whether a Julia allocation profile's counts are samples (see :func:`read`)."""
    if rate is None:
        return True
    if not 0 < rate <= 1:
        raise ValueError(f"{path}: alloc_sample_rate must be in (0, 1], not {rate!r}")
    return rate < 1


def _read_header(prof: Any, s: _Strings, path: Path, sample_type: str | None,
                 alloc_sample_rate: float | None = None) -> _Header:
    """Sample types -> metrics (unique base names) and the default sample type.

    Every sample type is loaded; ``sample_type`` only chooses the default metric, and an
    unknown one is an error naming the types that exist.
    """
    types = [(s(vt.type, "sample_type.type"), s(vt.unit, "sample_type.unit"))
             for vt in prof.sample_type]
    period_type = (s(prof.period_type.type, "period_type.type"),
                   s(prof.period_type.unit, "period_type.unit"))
    allocs = is_julia_allocs(types, period_type) and _allocs_sampled(alloc_sample_rate, path)
    all_sampled = period_type[0] in ("cpu", "wall") or allocs
    bases: list[str] = []
    metrics: list[Metric] = []
    for typ, unit in types:
        base, unit_enum = _metric_base(typ, unit)
        b0, k = base, 2
        while base in bases:
            base, k = f"{b0}_{k}", k + 1
        bases.append(base)
        sampled = all_sampled or typ in _SAMPLED_TYPES
        label = f"{typ} ({unit})" if unit else typ
        metrics.extend(self_and_total(base, unit_enum, label, sampled=sampled))
    if allocs:  # a row's bytes are the sizes of its sampled allocations: counted by allocs
        metrics[2:4] = [dataclasses.replace(m, count_of=c.name)
                        for m, c in zip(metrics[2:4], metrics[0:2], strict=True)]
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
    return _Header(types, period_type, bases, metrics, default_idx, allocs)


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
        if kind or file == "nothing":  # PProf.jl writes Julia's `nothing` as the file of
            file, start, line = "", 0, 0  # frames without a source (allocations, unknown)
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
class _Distinct:
    """The distinct samples (byte-identical ones merged), in order of first appearance."""

    raw: list[bytes]  # each distinct sample's encoding
    samples: Sequence[Any]  # the same, decoded (``Sample`` messages)
    weights: list[int]  # how many samples have exactly that encoding

    def indices(self, prof: Any, raws: set[bytes]) -> list[int]:
        """Positions in the file of the samples encoded as one of ``raws`` (error path)."""
        return [i for i, b in enumerate(prof.sample) if b in raws]


def _distinct_samples(path: Path, raw: list[bytes], gz_cut: str) -> _Distinct:
    """Count byte-identical samples, then decode each distinct one with the runtime.

    Byte-identical samples are the same message (same stack, values and labels), so
    weighting one decoded copy by its count is exact.  Decoding all distinct samples here
    also checks every sample the file holds (the raw-bytes parse does not look inside).
    """
    counts = Counter(raw)
    distinct = list(counts)
    try:
        samples = _as_samples(distinct)
    except Exception as e:  # google.protobuf.message.DecodeError
        raise _undecodable(path, gz_cut, e) from e
    return _Distinct(distinct, samples, list(counts.values()))


@dataclasses.dataclass
class _Samples:
    """The samples grouped by distinct stack, with the per-type and label tallies."""

    stacks: list[tuple]
    sums: np.ndarray  # (len(stacks), n_types) summed values per stack
    run_totals: np.ndarray  # (n_types,) sum over the kept samples
    by_type: dict[str, list[int]]
    label_keys: dict[str, str]


class _Labels:
    """Per-sample label reading: the ``type``/``bytes`` labels of allocation profiles and
    the unit of every label key (looked up once per key id, at most 64 keys)."""

    def __init__(self, st: list[str], s: _Strings) -> None:
        self.lookup = s.__call__  # a bound method: cheaper per label than the instance
        self.key_type = st.index("type") if "type" in st else -1
        self.key_bytes = st.index("bytes") if "bytes" in st else -1
        self.keys: dict[str, str] = {}
        self.seen: set[int] = set()

    def read(self, smp: Any) -> tuple[str | None, int]:
        """(the ``type`` label or None, the ``bytes`` label or 0) of one sample."""
        typ_label = None
        bytes_label = 0
        for lab in smp.label:
            if lab.key == self.key_type and lab.str:
                typ_label = self.lookup(lab.str, "label.str")
            elif lab.key == self.key_bytes and lab.num:
                bytes_label = lab.num
            if lab.key not in self.seen:
                self.read_keys([(lab.key, lab.num_unit)])
        return typ_label, bytes_label

    def read_keys(self, pairs: list[tuple[int, int]]) -> None:
        """Record the unit of each (key, num_unit) label in order (once per key id)."""
        for key, unit in pairs:
            if key not in self.seen and len(self.keys) < 64:
                self.seen.add(key)
                self.keys.setdefault(self.lookup(key, "label.key"),
                                     self.lookup(unit, "label.num_unit"))


def _check_value_counts(path: Path, prof: Any, ds: _Distinct, bad: list[int], n_types: int,
                        lenient: bool, warnings: list[str]) -> None:
    """Fail (strict) or warn once per sample (lenient, in file order) for the distinct
    samples ``bad`` whose number of values is not one per sample type."""
    if not bad:
        return
    n_values = {ds.raw[j]: len(ds.samples[j].value) for j in bad}
    for i in ds.indices(prof, set(n_values)):
        _fail(path, f"{n_types} values per sample (one per sample type)",
              f"{n_values[prof.sample[i]]} values in sample #{i}", lenient, warnings)


def _read_samples(prof: Any, st: list[str], s: _Strings, header: _Header, fr: _Frames,
                  ds: _Distinct, type_frames: bool,
                  progress: Callable[[float], None] | None) -> _Samples:
    """Group identical stacks so the tree builder sees each distinct stack once; tally
    allocation types and label keys on the way.  One pass over the distinct samples,
    each counted as many times as it occurs (``ds.weights``)."""
    types = header.types
    n_types = len(types)
    frames_of, alloc_types = fr.frames_of, fr.alloc_types
    labels = _Labels(st, s)
    count_idx = next((i for i, (_t, u) in enumerate(types) if u == "count"), None)
    bytes_idx = next((i for i, (_t, u) in enumerate(types) if u == "bytes"), None)
    by_type: dict[str, list[int]] = {}
    stack_index: dict[tuple, int] = {}
    stacks: list[tuple] = []
    n_distinct = len(ds.raw)
    step = max(1, n_distinct // 20)
    flat_vals: list[int] = []  # values of the kept distinct samples, n_types each
    groups: list[int] = []  # stack group of each kept distinct sample
    kept_weights: list[int] = []
    bad: list[int] = []  # distinct samples with the wrong number of values
    # only "Alloc: T" leaf frames carry a type: without such functions no leaf is looked up
    may_alloc = any(f[0].startswith("Alloc: ") for f in fr.functions.values())
    for j, (smp, w) in enumerate(zip(ds.samples, ds.weights, strict=True)):
        if progress and j % step == 0:
            progress(0.1 + 0.7 * j / max(n_distinct, 1))
        v = smp.value
        if len(v) != n_types:
            bad.append(j)
            if not fr.lenient:
                break
            continue
        flat_vals.extend(v)
        kept_weights.append(w)
        typ_label, bytes_label = labels.read(smp)
        locs = tuple(smp.location_id)
        leaf = frames_of(locs[0]) if locs and may_alloc else None
        leaf_type = alloc_types.get(leaf[-1]) if leaf else None
        key: tuple = locs
        if type_frames and typ_label is not None and leaf_type is None:
            key = ("\x00" + typ_label, *locs)  # leaf first, like location_id
        if typ_label is None:
            typ_label = leaf_type
        g = stack_index.setdefault(key, len(stacks))
        if g == len(stacks):
            stacks.append(key)
        groups.append(g)
        if typ_label is not None:
            acc = by_type.setdefault(typ_label, [0, 0])
            acc[0] += w * (int(v[count_idx]) if count_idx is not None else 1)
            acc[1] += w * (int(v[bytes_idx]) if bytes_idx is not None else bytes_label)
    _check_value_counts(fr.path, prof, ds, bad, n_types, fr.lenient, s.warnings)
    weighted = (np.array(flat_vals, dtype=np.int64).reshape(-1, n_types)
                * np.array(kept_weights, dtype=np.int64)[:, None])
    sums = np.zeros((len(stacks), n_types), dtype=np.int64)
    np.add.at(sums, np.array(groups, dtype=np.int64), weighted)
    return _Samples(stacks, sums, weighted.sum(axis=0), by_type, labels.keys)


def _as_samples(encodings: list[bytes]) -> Sequence[Any]:
    """``Sample`` messages decoded by the runtime from their encodings (all in one parse:
    they become the samples of a carrier profile)."""
    carrier = _raw_sample_profile()()
    carrier.sample.extend(encodings)
    return _proto().Profile.FromString(carrier.SerializeToString()).sample


def _read_samples_framed(st: list[str], s: _Strings, header: _Header, fr: _Frames,
                         raw: list[bytes], progress: Callable[[float], None] | None = None
                         ) -> _Samples | None:
    """What :func:`_read_samples` gives, for profiles whose samples carry no ``type`` or
    ``bytes`` labels, from the samples' framing (:mod:`.pprof_wire`): stacks, value lists
    and label keys are each decoded once per distinct one, however many samples there
    are and however unique their other labels (Julia's ``cycle_clock``).  None when the
    framing is unusual or a sample is not as the header says (then the sample-by-sample
    path decodes, tallies and reports)."""
    from google.protobuf.message import DecodeError

    from . import pprof_wire as wire

    fields = wire.frame_samples(raw)
    if fields is None:
        return None
    if progress:
        progress(0.3)
    locs, vals = fields.span_per_sample(wire.LOCATION_ID), fields.span_per_sample(wire.VALUE)
    if locs is None or vals is None:
        return None
    n_types = len(header.types)
    try:
        vcodes, vdistinct = wire.group_spans(fields.blob, *vals)
        value_lists = [list(m.value) for m in _as_samples(vdistinct)]
        if any(len(v) != n_types for v in value_lists):
            return None
        pairs = wire.label_keys(fields.label_groups())
        if progress:
            progress(0.5)
        scodes, sdistinct = wire.group_spans(fields.blob, *locs)
        stacks = [tuple(m.location_id) for m in _as_samples(sdistinct)]
    except DecodeError:
        return None
    labels = _Labels(st, s)
    bytes_label_used = not any(u == "bytes" for _t, u in header.types)
    if any(key == labels.key_type or (key == labels.key_bytes and bytes_label_used)
           for key, _unit in pairs):
        return None  # per-sample type / bytes labels: tallied sample by sample
    labels.read_keys(pairs)
    per_sample = np.array(value_lists, dtype=np.int64).reshape(-1, n_types)[vcodes]
    sums = np.zeros((len(stacks), n_types), dtype=np.int64)
    np.add.at(sums, scodes, per_sample)
    by_type = _leaf_types(fr, header, stacks, sums, np.bincount(scodes, minlength=len(stacks)))
    return _Samples(stacks, sums, per_sample.sum(axis=0), by_type, labels.keys)


def _leaf_types(fr: _Frames, header: _Header, stacks: list[tuple], sums: np.ndarray,
                n_samples: np.ndarray) -> dict[str, list[int]]:
    """[count, bytes] per allocated type named by ``Alloc: T`` leaf frames, from the
    per-stack sums (count: the first count-unit sample type, else the number of samples;
    bytes: the first bytes-unit sample type, else 0 - there are no ``bytes`` labels)."""
    by_type: dict[str, list[int]] = {}
    if not any(f[0].startswith("Alloc: ") for f in fr.functions.values()):
        return by_type
    types = header.types
    count_idx = next((i for i, (_t, u) in enumerate(types) if u == "count"), None)
    bytes_idx = next((i for i, (_t, u) in enumerate(types) if u == "bytes"), None)
    for g, locs in enumerate(stacks):
        leaf = fr.frames_of(locs[0]) if locs else None
        typ = fr.alloc_types.get(leaf[-1]) if leaf else None
        if typ is not None:
            acc = by_type.setdefault(typ, [0, 0])
            acc[0] += int(sums[g, count_idx]) if count_idx is not None else int(n_samples[g])
            acc[1] += int(sums[g, bytes_idx]) if bytes_idx is not None else 0
    return by_type


def _stack_frames_loop(fr: _Frames, smp: _Samples) -> tuple[list[int], list[int], list[int]]:
    """Each distinct stack as root-first frame ids: (flat ids, length per stack, stack
    group per stack).  Stacks of unknown locations only are dropped unless they carry
    cost; every unknown location is reported."""
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
    return flat, lengths, used


def _stack_frames_arrays(fr: _Frames, smp: _Samples
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """What :func:`_stack_frames_loop` returns, with whole-array operations: 10^4 stacks
    of 100 locations are 10^6 Python calls in the loop.

    Locations are turned into frames in order of first appearance (root first, stack
    by stack), so frame ids come out as the loop makes them.  None, for the loop to
    handle and report, when a stack is empty, starts with a synthesised ``Alloc:``
    frame or names an unknown location.
    """
    stacks = smp.stacks
    n = len(stacks)
    lens = np.fromiter(map(len, stacks), dtype=np.int64, count=n)
    if not n or lens.min() == 0 or any(isinstance(k[0], str) for k in stacks):
        return None
    lids = np.fromiter(itertools.chain.from_iterable(stacks), dtype=np.uint64,
                       count=int(lens.sum()))
    starts = np.cumsum(lens) - lens
    stack_of = np.repeat(np.arange(n, dtype=np.int64), lens)
    pos = np.arange(len(lids), dtype=np.int64)
    root_first = lids[2 * starts[stack_of] + lens[stack_of] - 1 - pos]  # leaf-first -> root-first
    uniq, first, inv = np.unique(root_first, return_index=True, return_inverse=True)
    inv = inv.ravel()
    loc_len = np.empty(len(uniq), dtype=np.int64)
    by_uniq: list[tuple[int, ...]] = [()] * len(uniq)
    for u in np.argsort(first, kind="stable").tolist():  # first appearance = loop order
        lf = fr.frames_of(int(uniq[u]))
        if lf is None:
            return None
        by_uniq[u] = lf
        loc_len[u] = len(lf)
    loc_flat = np.fromiter(itertools.chain.from_iterable(by_uniq), dtype=np.int64,
                           count=int(loc_len.sum()))
    loc_start = np.cumsum(loc_len) - loc_len
    elem_len = loc_len[inv]
    if (loc_len == 1).all():  # no inlined lines: one frame per location
        flat = loc_flat[loc_start[inv]]
    else:
        out_start = np.cumsum(elem_len) - elem_len
        e_of = np.repeat(np.arange(len(inv), dtype=np.int64), elem_len)
        offset = np.arange(int(elem_len.sum()), dtype=np.int64) - out_start[e_of]
        flat = loc_flat[loc_start[inv][e_of] + offset]
    cum = np.concatenate([[0], np.cumsum(elem_len)])
    return flat, cum[starts + lens] - cum[starts], np.arange(n, dtype=np.int64)


def _add_stacks(builder: TreeBuilder, fr: _Frames, smp: _Samples, n_types: int,
                self_names: list[str]) -> None:
    """Expand each distinct stack into root-first frame ids and hand them to the builder
    in one call."""
    got = _stack_frames_arrays(fr, smp)
    flat, lengths, used = got if got is not None else _stack_frames_loop(fr, smp)
    sums = smp.sums
    kept = sums[np.asarray(used, dtype=np.int64)] if len(used) else np.zeros((0, n_types),
                                                                              np.int64)
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
    if header.allocations_sampled:
        meta["allocations_sampled"] = True  # see read(): alloc_sample_rate unknown or < 1
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
    if header.allocations_sampled:
        # each recorded allocation is one sample: the count the sampling error is of
        totals["total_samples"] = int(smp.run_totals[0])
        total_metrics["total_samples"] = Metric(
            "total_samples", Unit.SAMPLES, Kind.NODE, "allocations sampled",
            "allocations Profile.Allocs recorded (a sample of all of them)", sampled=True)
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


def _never_back(progress: Callable[[float], None]) -> Callable[[float], None]:
    """``progress`` without steps back (the framed path may give up at 0.5 and the
    sample-by-sample path then counts from 0.1)."""
    done = [0.0]

    def report(fraction: float) -> None:
        if fraction >= done[0]:
            done[0] = fraction
            progress(fraction)

    return report


def read(
    path: Path,
    *,
    lenient: bool = False,
    progress: Callable[[float], None] | None = None,
    sample_type: str | None = None,
    granularity: str = "functions",
    type_frames: bool = False,
    alloc_sample_rate: float | None = None,
    **_options: Any,
) -> Profile:
    """Read a pprof profile into a call tree with one self/total pair per sample type.

    Steps: decode (protobuf + string table), header (sample types -> metrics), body
    (samples grouped by stack, locations -> frames), build (profile assembly).

    ``alloc_sample_rate``: the ``sample_rate`` a Julia allocation profile was recorded at
    (``Profile.Allocs.@profile sample_rate=...``), which PProf.jl does not write into the
    file.  Unknown (None) or below 1, its counts and bytes are samples of all allocations
    (``sampled``; Julia's default rate is 0.1, so two runs of one program record different
    allocations), its bytes are counted by its allocations (``Metric.count_of``) and
    ``total_samples`` is the number recorded; 1 (every allocation recorded): exact.
    """
    path = Path(path)
    progress = _never_back(progress) if progress else None
    data, gz_cut = _decode(path)
    if granularity not in ("functions", "lines"):
        raise ValueError(f"granularity must be 'functions' or 'lines', not {granularity!r}")
    prof, st = _parse(path, data, gz_cut)
    del data  # the message holds what is needed (peak RSS)
    if progress:
        progress(0.1)
    s = _Strings(path, st, lenient)
    header = _read_header(prof, s, path, sample_type, alloc_sample_rate)
    self_names = header.self_names
    builder = TreeBuilder(self_names)
    fr = _Frames(prof, s, builder, granularity, path, lenient)
    raw = list(prof.sample)
    smp = _read_samples_framed(st, s, header, fr, raw, progress)
    if smp is None:
        smp = _read_samples(prof, st, s, header, fr, _distinct_samples(path, raw, gz_cut),
                            type_frames, progress)
    _add_stacks(builder, fr, smp, len(header.types), self_names)
    if progress:
        progress(0.9)
    meta = _meta(prof, s, header, fr, smp, granularity)
    profile = _build(path, builder, header, fr, smp, meta, s.warnings)
    if progress:
        progress(1.0)
    return with_cut(profile, gz_cut)
