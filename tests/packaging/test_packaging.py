"""Installed, profdiff is one import name: ``profdiff`` (issue 16, item 6).

Why these tests: the folders are ``parsers/``, ``viewer/``, ``resources/`` and
``samples/`` but install as ``profdiff.parsers``, ``profdiff.viewer``, ... (package-dir
in pyproject.toml).  What can go wrong is silent: a module imported under its folder
name as well is a second copy (two ``Profile`` classes), a new sub-package missing from
the package list is simply absent from a ``pip install .``, and data not declared as
package data works in the source tree and is missing installed (the sample comparison
did exactly that).  So the wheel itself is built and inspected, and the installed tree is
run from outside the source tree.
"""

# namespace-imports: off  (the rewrite's own test: the old names below are its input)
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from tool_requirements import require

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tests/tools/namespace_imports.py"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _tool():
    spec = importlib.util.spec_from_file_location("namespace_imports", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- the import rewrite --------------------------------------------------------------

def test_no_file_uses_the_folder_names_as_modules(capsys):
    """Every import (and module-name string) is profdiff.*: a file still written against
    ``parsers``/``viewer`` would load a second copy of the modules from the source tree."""
    assert _tool().run(ROOT, check=True, sort_imports=False) == 0, capsys.readouterr().out


SOURCE = '''"""Docstring: parsers.model and viewer.cli stay prose."""
import parsers
import viewer.qt.window_noise as window_noise
from parsers.model import (Kind,
    Profile)
from viewer import cli
from . import local
import profdiff.viewer.units as units

COMMANDS = (("show", "viewer.show_cli"), ("x", f"parsers.{name}"))
ENTRY = "viewer.cli:main"
PATHS = ("viewer/cli.py", "parsers", ROOT / "viewer")
CODE = "import sys; from viewer.cli import main\\nimport parsers\\n"
ARGV = [sys.executable, "-m", "viewer.cli", "watch"]
MSG = "module 'parsers' has no attribute"


def f():
    """Uses parsers.load."""
    from viewer.compare import align
    importlib.import_module("parsers")
    monkeypatch.setattr("viewer.qt.loader.load", None)
    return parsers.load, align
'''

EXPECTED = '''"""Docstring: parsers.model and viewer.cli stay prose."""
from profdiff import parsers
import profdiff.viewer.qt.window_noise as window_noise
from profdiff.parsers.model import (Kind,
    Profile)
from profdiff.viewer import cli
from . import local
import profdiff.viewer.units as units

COMMANDS = (("show", "profdiff.viewer.show_cli"), ("x", f"profdiff.parsers.{name}"))
ENTRY = "profdiff.viewer.cli:main"
PATHS = ("viewer/cli.py", "parsers", ROOT / "viewer")
CODE = "import sys; from profdiff.viewer.cli import main\\nfrom profdiff import parsers\\n"
ARGV = [sys.executable, "-m", "profdiff.viewer.cli", "watch"]
MSG = "module 'parsers' has no attribute"


def f():
    """Uses parsers.load."""
    from profdiff.viewer.compare import align
    importlib.import_module("profdiff.parsers")
    monkeypatch.setattr("profdiff.viewer.qt.loader.load", None)
    return parsers.load, align
'''


def test_rewrite_covers_imports_and_module_strings_and_is_idempotent():
    tool = _tool()
    once = tool.rewrite_python(SOURCE)
    assert once == EXPECTED
    assert tool.rewrite_python(once) == once


@pytest.mark.parametrize("line", ["import parsers.model\n", "import os, viewer\n"])
def test_rewrite_refuses_imports_without_a_one_to_one_form(line):
    tool = _tool()
    with pytest.raises(tool.NeedsHandEdit):
        tool.rewrite_python(line)


def test_rewrite_of_pyproject_names_but_not_paths():
    tool = _tool()
    src = ('profdiff = "viewer.cli:main"\nmodule = ["parsers.ghc_prof", "viewer.watch"]\n'
           'files = ["parsers", "viewer"]\nexclude = [\'^viewer/qt/\']  # "viewer.qt" here\n'
           '"viewer/qt/*" = ["B008"]\n')
    out = tool.rewrite_toml(src)
    assert out == ('profdiff = "profdiff.viewer.cli:main"\n'
                   'module = ["profdiff.parsers.ghc_prof", "profdiff.viewer.watch"]\n'
                   'files = ["parsers", "viewer"]\nexclude = [\'^viewer/qt/\']  # "viewer.qt" here\n'
                   '"viewer/qt/*" = ["B008"]\n')
    assert tool.rewrite_toml(out) == out


# --- the package list ------------------------------------------------------------------

def _package_folders() -> dict[str, Path]:
    """Installed package name -> folder, for every folder with an __init__.py under the
    package-dir roots (the profdiff package's own folder is not a sub-package)."""
    mapping = PYPROJECT["tool"]["setuptools"]["package-dir"]
    own = ROOT / mapping["profdiff"]
    found = {"profdiff": own}
    for name, folder in mapping.items():
        if name == "profdiff":
            continue
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            d = init.parent
            if d == own or own in d.parents or "__pycache__" in d.parts:
                continue
            found[".".join([name, *d.relative_to(base).parts])] = d
    return found


def test_every_package_folder_is_installed():
    """A sub-package missing from [tool.setuptools] packages is missing from ``pip install
    .`` while everything works in the source tree (``viewer.annotate`` was)."""
    assert sorted(PYPROJECT["tool"]["setuptools"]["packages"]) == sorted(_package_folders())


# --- the built wheel, installed outside the source tree ---------------------------------

def _setuptools_ok() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    return major >= 77  # pyproject's build-system requirement


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the source (so no build/ folder of the tree leaks in)."""
    require(_setuptools_ok(), "setuptools>=77 (the test extra) is needed to build the wheel")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in {Path(f).parts[0] for f in PYPROJECT["tool"]["setuptools"]["package-dir"].values()}:
        shutil.copytree(ROOT / folder, src / folder, ignore=skip)
    out = tmp / "dist"
    code = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel unpacked, as pip lays out a pure-Python wheel in site-packages."""
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    return site


def test_wheel_installs_only_the_profdiff_name(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        top_level = z.read(f"{dist_info}/top_level.txt").decode().split()
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode()
    assert top_level == ["profdiff"]
    assert {n.split("/")[0] for n in names} == {"profdiff", dist_info}
    for expected in ("profdiff/__init__.py", "profdiff/__main__.py",
                     "profdiff/parsers/detect.py", "profdiff/parsers/proto/profile_pb2.py",
                     "profdiff/viewer/cli.py", "profdiff/viewer/annotate/compare.py",
                     "profdiff/viewer/qt/main_window.py", "profdiff/resources/open.svg",
                     "profdiff/resources/profdiff.qss", "profdiff/samples/hs-ad-v1.prof",
                     "profdiff/samples/hs-ad-v2.prof"):
        assert expected in names, expected
    assert not [n for n in names if n.startswith("profdiff/viewer/package/")]
    assert "profdiff = profdiff.viewer.cli:main" in entry_points


def _run_installed(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``python ARGS`` from a folder outside the source tree, with the unpacked wheel
    first on the path (before the editable install of this checkout)."""
    env = dict(os.environ, PYTHONPATH=str(site), QT_QPA_PLATFORM="offscreen", NO_COLOR="1")
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, check=False, timeout=120)


def test_installed_finds_the_sample_comparison_as_package_data(installed, tmp_path):
    code = ("import profdiff.viewer.bundled as b\n"
            "found, missing = b.sample_pair()\n"
            "print(b.__file__); print(missing); print(*found, sep='\\n')\n"
            "print(b.resource('profdiff.qss'))")
    out = _run_installed(installed, tmp_path, "-c", code)
    assert out.returncode == 0, out.stderr
    module, missing, v1, v2, qss = out.stdout.splitlines()
    assert Path(module).is_relative_to(installed)
    assert missing == "[]"
    assert Path(v1) == installed / "profdiff/samples/hs-ad-v1.prof"
    assert Path(v2) == installed / "profdiff/samples/hs-ad-v2.prof"
    assert Path(qss) == installed / "profdiff/resources/profdiff.qss"


def test_installed_python_m_profdiff_and_diff_of_the_samples(installed, tmp_path, capsys):
    """``python -m profdiff`` of the installed tree: its ``diff --json`` of the bundled pair
    is the source tree's, byte for byte, and comes from the installed modules."""
    help_ = _run_installed(installed, tmp_path, "-m", "profdiff", "--help")
    assert help_.returncode == 0, help_.stderr
    assert help_.stdout.startswith("usage: profdiff")
    pair = [str(ROOT / "samples/hs-ad-v1.prof"), str(ROOT / "samples/hs-ad-v2.prof")]
    diff = _run_installed(installed, tmp_path, "-m", "profdiff", "diff", "--json", *pair)
    assert diff.returncode == 0, diff.stderr
    from profdiff.viewer.cli import main

    assert main(["diff", "--json", *pair]) == 0
    assert json.loads(diff.stdout) == json.loads(capsys.readouterr().out)
    where = _run_installed(installed, tmp_path, "-c",
                           "import profdiff.viewer.compare as c, profdiff.parsers.model as m;"
                           "print(c.__file__); print(m.__file__)")
    assert where.returncode == 0, where.stderr
    assert all(Path(p).is_relative_to(installed) for p in where.stdout.split())


def test_installed_tree_has_no_generic_top_level_names(installed, tmp_path):
    out = _run_installed(installed, tmp_path, "-c", "import parsers")
    assert out.returncode != 0 and "No module named 'parsers'" in out.stderr
    assert sorted(p.name for p in installed.iterdir() if not p.name.endswith(".dist-info")) \
        == ["profdiff"]


def test_installed_app_opens_the_sample_comparison(installed, tmp_path):
    """File > Open sample comparison in the installed tree (offscreen): both runs load."""
    code = ("from PySide6.QtCore import QSettings\n"
            "from PySide6.QtWidgets import QApplication\n"
            "app = QApplication([])\n"
            "from profdiff.viewer.qt.main_window import MainWindow\n"
            "import profdiff.viewer.qt.main_window as mw\n"
            f"w = MainWindow(settings=QSettings({str(tmp_path / 's.ini')!r}, "
            "QSettings.Format.IniFormat))\n"
            "w.open_sample()\n"
            "import time\n"
            "t = time.monotonic()\n"
            "while w.comparison is None and time.monotonic() - t < 60:\n"
            "    app.processEvents(); time.sleep(0.02)\n"
            "print(mw.__file__); print(w.comparison.n_runs); print(*w.paths, sep='\\n')\n")
    out = _run_installed(installed, tmp_path, "-c", code)
    assert out.returncode == 0, out.stderr[-3000:]
    module, n_runs, *paths = out.stdout.splitlines()
    assert Path(module).is_relative_to(installed)
    assert n_runs == "2"
    assert [Path(p).name for p in paths] == ["hs-ad-v1.prof", "hs-ad-v2.prof"]
    assert all(Path(p).is_relative_to(installed) for p in paths)
