"""Run mypy on profdiff as it is installed: ``profdiff.parsers``, ``profdiff.viewer``, ...

Why a script: the folders are ``parsers/``, ``viewer/``, ... but their modules are
``profdiff.parsers.*``, ``profdiff.viewer.*`` (``[tool.setuptools.package-dir]`` in
``pyproject.toml``).  mypy names a module after its folder and does not run the
editable install's import hook, so checked in place every ``from profdiff.parsers...``
would be unresolved.  This script lays out the installed tree in a folder as
symbolic links to the real folders (read from ``package-dir``, so it follows any change
there; the links live in ``.mypy_cache/installed-layout``), runs mypy with the ``[tool.mypy]`` settings (``packages = ["profdiff"]``), and
prints the errors with the real paths (``parsers/model.py``, not
``profdiff/parsers/model.py``).

    python tests/tools/typecheck.py [extra mypy arguments]

The exit code is mypy's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def package_dirs(root: Path) -> dict[str, Path]:
    """``package-dir`` of pyproject.toml: package name -> folder."""
    cfg = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = cfg["tool"]["setuptools"]["package-dir"]
    return {name: root / folder for name, folder in mapping.items()}


def build_tree(root: Path, dest: Path) -> dict[str, str]:
    """Links in ``dest`` that make the installed layout; returns tree prefix -> real path
    (both relative, with a trailing slash) for reporting."""
    prefixes: dict[str, str] = {}
    for name, folder in sorted(package_dirs(root).items(), key=lambda kv: kv[0].count(".")):
        target = dest.joinpath(*name.split("."))
        rel_real = folder.relative_to(root).as_posix() + "/"
        if "." not in name:  # the top package: its own files, the subpackages come next
            target.mkdir(parents=True, exist_ok=True)
            for f in folder.iterdir():
                if f.suffix == ".py":
                    (target / f.name).symlink_to(f)
        else:
            target.symlink_to(folder, target_is_directory=True)
        prefixes[target.relative_to(dest).as_posix() + "/"] = rel_real
    return prefixes


def _real_path(line: str, prefixes: dict[str, str]) -> str:
    for tree, real in sorted(prefixes.items(), key=lambda kv: -len(kv[0])):
        if line.startswith(tree):
            return real + line[len(tree):]
    return line


def main(argv: list[str]) -> int:
    mypy = Path(sys.executable).parent / "mypy"
    cmd = [str(mypy)] if mypy.exists() else [sys.executable, "-m", "mypy"]
    cache = ROOT / ".mypy_cache"
    # a fixed place (inside mypy's own, git-ignored cache) so the cache stays valid
    tree = cache / "installed-layout"
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    prefixes = build_tree(ROOT, tree)
    env = dict(os.environ, MYPY_FORCE_COLOR="0")
    proc = subprocess.run(
        [*cmd, "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache),
         *argv], cwd=tree, env=env, capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        print(_real_path(line, prefixes))
    sys.stderr.write(proc.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
