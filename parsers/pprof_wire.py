"""Where each field of each pprof sample lies, found with whole-array operations.

Why: a CPU profile holds 10^6 samples and a Julia one gives every sample a unique
``cycle_clock`` label, so no two samples are alike and decoding them one message at a
time costs several Python calls per sample.  Here only the *framing* of the samples is
read (field tag and length of every top-level field of every sample, all samples in
step, one numpy pass per field position); every payload is still decoded by the protobuf
runtime, once per distinct stack, distinct value list and distinct label key.

Only the layouts known producers write are taken: one-byte tags, ``location_id`` and
``value`` packed or not (Go writes two values unpacked) with each one's fields next to
each other, ``label`` messages.  Anything else (unknown fields, interleaved repeated
fields, a damaged length) gives None and the reader decodes whole sample messages
instead, which is exact for any layout and reports damage.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

LOCATION_ID, VALUE, LABEL = 1, 2, 3  # Sample field numbers (profile.proto)
_VARINT, _LENGTH_DELIMITED = 0, 2


@dataclasses.dataclass
class Step:
    """The k-th top-level field of every sample that has k fields or more."""

    sample: np.ndarray  # the samples (ascending)
    number: np.ndarray  # field number
    start: np.ndarray  # offset of the tag in the blob
    end: np.ndarray  # offset after the payload


@dataclasses.dataclass
class SampleFields:
    """Every top-level field of every sample, as steps (see :class:`Step`).

    ``blob`` holds the samples' encodings one after the other; a field is
    ``blob[start:end]`` including its tag and length (so it parses on its own).
    """

    blob: bytes
    n_samples: int
    steps: list[Step]

    def span_per_sample(self, number: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(start, end) per sample covering its fields ``number`` (an empty span where a
        sample has none), or None when other fields lie between them in some sample."""
        n = self.n_samples
        start = np.zeros(n, dtype=np.int64)
        end = np.zeros(n, dtype=np.int64)
        count = np.zeros(n, dtype=np.int64)
        first_step = np.zeros(n, dtype=np.int64)
        for k, step in enumerate(self.steps):
            sel = step.number == number
            who = step.sample[sel]
            new = count[who] == 0
            start[who[new]] = step.start[sel][new]
            first_step[who[new]] = k
            end[who] = step.end[sel]
            count[who] += 1
            # contiguous so far: this field directly follows the previous one of its kind
            if ((k - first_step[who]) + 1 != count[who]).any():
                return None  # e.g. values, then a label, then more values
        return start, end

    def label_groups(self) -> list[bytes]:
        """Each sample's labels (when they lie next to each other, else each label on its
        own), for :func:`label_keys`."""
        spans = self.span_per_sample(LABEL)
        if spans is None:
            parts = [(st.start[st.number == LABEL], st.end[st.number == LABEL])
                     for st in self.steps]
            order = np.argsort(np.concatenate([p[0] for p in parts]))  # file order
            spans = (np.concatenate([p[0] for p in parts])[order],
                     np.concatenate([p[1] for p in parts])[order])
        start, end = spans
        has = end > start
        return [self.blob[a:b] for a, b in zip(start[has].tolist(), end[has].tolist(),
                                               strict=True)]


def _varints(buf: np.ndarray, at: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, sizes) of the base-128 varints starting at ``at`` (at most ``limit``
    bytes; sizes are 0 where a varint is longer; values are only meant for lengths,
    ``limit`` <= 5)."""
    value = np.zeros(len(at), dtype=np.int64)
    size = np.zeros(len(at), dtype=np.int64)
    going = np.ones(len(at), dtype=bool)
    for k in range(limit):
        b = buf[at + k].astype(np.int64)
        value[going] |= (b[going] & 0x7F) << (7 * k)
        ends = going & (b < 0x80)
        size[ends] = k + 1
        going &= b >= 0x80
        if not going.any():
            break
    return value, size


def frame_samples(raw: Sequence[bytes]) -> SampleFields | None:
    """The fields of every sample (``raw``: each sample's encoding), or None when a sample
    is not laid out as described in the module docstring."""
    n = len(raw)
    lens = np.fromiter(map(len, raw), dtype=np.int64, count=n)
    blob = b"".join(itertools.chain(raw, (bytes(16),)))  # padding: reads past the end
    buf = np.frombuffer(blob, dtype=np.uint8)
    ends = np.cumsum(lens)
    pos = ends - lens
    active = np.flatnonzero(lens > 0)
    steps: list[Step] = []
    while active.size:
        at = pos[active]
        tag = buf[at]
        wire = tag & 7
        varint = wire == _VARINT
        if (tag >= 0x80).any() or not (varint | (wire == _LENGTH_DELIMITED)).all():
            return None
        size, nbytes = _varints(buf, at + 1, 5)
        stop = at + 1 + nbytes + size
        if varint.any():  # an unpacked repeated value: the varint is the whole payload
            _, scalar = _varints(buf, at[varint] + 1, 10)
            if (scalar == 0).any():
                return None
            stop[varint] = at[varint] + 1 + scalar
            nbytes[varint] = 1
        if (nbytes == 0).any() or (stop > ends[active]).any():
            return None
        number = (tag >> 3).astype(np.int64)
        if not ((number == LOCATION_ID) | (number == VALUE) | (number == LABEL)).all() or (
                varint & (number == LABEL)).any():
            return None  # a field Sample does not have, or a label that is not a message
        steps.append(Step(active, number, at, stop))
        pos[active] = stop
        active = active[stop < ends[active]]
    return SampleFields(blob, n, steps)


def group_spans(blob: bytes, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """(code per span, distinct span bytes in order of first appearance)."""
    width = int((end - start).max()) if len(start) else 0
    if width <= _SHORT:
        return _group_short(blob, start, end, width)
    spans = [blob[a:b] for a, b in zip(start.tolist(), end.tolist(), strict=True)]
    distinct = list(dict.fromkeys(spans))
    index = {b: i for i, b in enumerate(distinct)}
    codes = np.fromiter(map(index.__getitem__, spans), dtype=np.int64, count=len(spans))
    return codes, distinct


_SHORT = 24  # spans up to this many bytes are grouped as fixed-width rows (value lists)


def _group_short(blob: bytes, start: np.ndarray, end: np.ndarray, width: int
                 ) -> tuple[np.ndarray, list[bytes]]:
    """:func:`group_spans` for short spans: each span becomes one zero-padded row of
    ``width`` bytes plus its length, and rows are grouped with ``np.unique``."""
    buf = np.frombuffer(blob, dtype=np.uint8)
    lens = end - start
    rows = np.zeros((len(start), width + 1), dtype=np.uint8)
    rows[:, width] = lens  # lengths <= 24 fit a byte; tells b"a" from b"a\0"
    for k in range(width):
        has = lens > k
        rows[has, k] = buf[start[has] + k]
    keyed = np.ascontiguousarray(rows).view(np.dtype((np.void, width + 1))).ravel()
    _, first, inverse = np.unique(keyed, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    distinct = [blob[int(start[i]):int(end[i])] for i in first[order].tolist()]
    return rank[inverse.ravel()], distinct


@functools.cache
def _views() -> tuple[Any, Any, Any]:
    """Messages over the labels of samples, derived from the generated descriptor:
    ``LabelKeys`` keeps only each label's ``key`` and ``num_unit`` (the rest becomes
    unknown and is discarded); ``LabelGroups`` holds many such label lists (one per
    sample) and ``RawGroups`` reads each list as raw bytes, to count distinct ones."""
    from google.protobuf import descriptor_pb2, message_factory

    from .proto import profile_pb2 as pb

    src = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(src)
    label = next(m for m in src.message_type if m.name == "Label")
    out = descriptor_pb2.FileDescriptorProto(
        name="profdiff_pprof_label_views.proto", package=f"{src.package}.profdiff_views",
        syntax=src.syntax)
    keys = out.message_type.add(name="LabelKey")
    keys.field.extend(f for f in label.field if f.name in ("key", "num_unit"))
    f = descriptor_pb2.FieldDescriptorProto
    out.message_type.add(name="LabelKeys").field.add(
        name="label", number=LABEL, label=f.LABEL_REPEATED, type=f.TYPE_MESSAGE,
        type_name=f".{out.package}.LabelKey")
    out.message_type.add(name="LabelGroups").field.add(
        name="group", number=1, label=f.LABEL_REPEATED, type=f.TYPE_MESSAGE,
        type_name=f".{out.package}.LabelKeys")
    out.message_type.add(name="RawGroups").field.add(
        name="group", number=1, label=f.LABEL_REPEATED, type=f.TYPE_BYTES)
    pool = pb.DESCRIPTOR.pool
    pool.Add(out)
    return tuple(message_factory.GetMessageClass(  # type: ignore[return-value]
        pool.FindMessageTypeByName(f"{out.package}.{name}"))
        for name in ("LabelKeys", "LabelGroups", "RawGroups"))


def label_keys(groups: list[bytes]) -> list[tuple[int, int]]:
    """The distinct (key, num_unit) string indices of the labels in ``groups`` (each: label
    fields one after the other, e.g. one sample's), in order of first appearance.

    Each group is reduced to its labels' keys and units by the runtime (unknown fields
    discarded), so groups that differ only in label values (a clock) count once."""
    keys_view, groups_view, raw_groups = _views()
    carrier = raw_groups()
    carrier.group.extend(groups)
    only_keys = groups_view.FromString(carrier.SerializeToString())
    only_keys.DiscardUnknownFields()
    distinct = dict.fromkeys(raw_groups.FromString(only_keys.SerializeToString()).group)
    labels = keys_view.FromString(b"".join(distinct)).label
    seen = dict.fromkeys((lab.key, lab.num_unit) for lab in labels)
    return list(seen)
