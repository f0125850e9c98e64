"""Test setup: offscreen Qt before any Qt import; paths to the copied real data."""

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import pytest  # noqa: E402

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def bench_callgrind():
    """The callgrind benchmark script as a module (its generator writes realistic files:
    non-ASCII names, fi/fe, cob/cfi, subpositions)."""
    import importlib.util

    path = Path(__file__).parent / "bench" / "bench_callgrind.py"
    spec = importlib.util.spec_from_file_location("bench_callgrind", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture(autouse=True, scope="session")
def _empty_home(tmp_path_factory: pytest.TempPathFactory):
    """Run every test with HOME pointing at an empty folder.

    Why: the user's home holds things that change results (perf's build-id cache in
    ``~/.debug``, ``~/.perfconfig``, Qt settings), so a test must never see it.
    """
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.delenv("PERF_BUILDID_DIR", raising=False)
        yield home
