"""Sampling error for speedscope files: their run totals count samples as
``self_samples`` (not ``total_samples``), and that count is what a sampled metric's
change is weighed against (:func:`viewer.noise.run_sample_count`).

Two py-spy runs of one program (the self-driving-sim pair): before, with no sample count
found, every row that moved read "changed" (1,319 of the 1,515 rows both runs have)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from profdiff.parsers import load
from profdiff.viewer.compare import Status, align
from profdiff.viewer.noise import run_sample_count, single_run_noise

SS = Path(__file__).parents[1] / "data" / "speedscope"
PAIR = [SS / f"pyspy-0.4.1-self-driving-sim-run-{x}.speedscope.json.gz" for x in "ab"]


def _samples_in(path: Path) -> int:
    doc = json.loads(gzip.decompress(path.read_bytes()))
    return sum(len(p["samples"]) for p in doc["profiles"])


def test_the_sample_count_is_the_files_samples():
    for path in PAIR:
        assert run_sample_count(load(path)) == _samples_in(path) > 4000


def test_two_runs_of_one_program_are_judged_by_sampling_error():
    cmp = align([load(p) for p in PAIR], mode="flat")
    nz = single_run_noise(cmp)
    cmp.add_noise(nz)
    for m in ("self_samples", "total_samples", "self_time_s", "total_time_s"):
        assert nz.metrics[m].method.startswith("z test on sample counts"), m
    st = cmp.status
    both = np.count_nonzero((st == Status.SAME) | (st == Status.CHANGED))
    changed = np.count_nonzero(st == Status.CHANGED)
    assert both > 1500 and changed < 0.1 * both  # 87 of 1,515
