"""Rewrite absolute imports of ``parsers``, ``viewer`` and ``resources`` to ``profdiff.*``.

Why this is a script and not a one-off edit: installed, profdiff's folders are the
packages ``profdiff.parsers``, ``profdiff.viewer`` and ``profdiff.resources``
(``[tool.setuptools.package-dir]`` in ``pyproject.toml``).  A module imported under two
names is two modules (two ``Profile`` classes, so ``isinstance`` fails), so every
import must use the ``profdiff.`` name.  Code written against the old names (another
branch, an old patch) is brought over by running this again:

    python3 tests/tools/namespace_imports.py          # rewrite in place, list the files
    python3 tests/tools/namespace_imports.py --check  # exit 1 if anything would change

It is idempotent (a second run changes nothing) and needs only the standard library.
A longer module name can push an import past the line length, so the files it changed
are then passed to ``ruff check --fix --select I`` (the project's import sorting), when
ruff is found next to the Python running the script or on PATH.

What it rewrites, in ``*.py`` under ``parsers/``, ``viewer/``, ``tests/`` and in
``pyproject.toml``:

* ``from parsers.x import y`` -> ``from profdiff.parsers.x import y``;
  ``import parsers`` -> ``from profdiff import parsers``;
  ``import viewer.qt.x as m`` -> ``import profdiff.viewer.qt.x as m``;
* string literals naming a module: ``"viewer.show_cli"``, ``f"parsers.{name}"``,
  ``"viewer.cli:main"``, mock/monkeypatch targets, ``["-m", "viewer.cli"]``,
  ``import_module("parsers")``;
* code inside strings (``python -c`` snippets): ``from parsers import x``, ``import
  parsers``;
* quoted dotted names in ``pyproject.toml`` (entry points, package lists, mypy
  ``module`` overrides).  Paths such as ``"viewer/qt/*"`` or ``files = ["parsers"]``
  are folders and stay.

What it leaves alone: relative imports (they follow the package), docstrings and
comments (prose; folders keep their names), data files, and files with the line
``# namespace-imports: off`` (tests that need the old names as data).  ``import parsers.model``
without ``as`` and ``import a, parsers`` cannot be rewritten one-to-one; they are
reported (exit 2) for a hand edit.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "profdiff"
PACKAGES = ("parsers", "viewer", "resources")
FOLDERS = ("parsers", "viewer", "tests")
OPT_OUT = "# namespace-imports: off"

_NAMES = "|".join(PACKAGES)
# a quote, then an old package name, then ".ident", ".{", or ":ident" (module:attr)
_DOTTED_IN_STRING = re.compile(rf"""(?<=['"])({_NAMES})(?=[.:][A-Za-z_{{])""")
# python code inside a string: "...; from viewer.cli import main\n..."
_CODE_FROM = re.compile(rf"(?:^|(?<=[;\n'\"])|(?<=\\n))([ \t]*from[ \t]+)({_NAMES})(?=[ \t.])",
                        re.M)
_CODE_IMPORT_AS = re.compile(
    rf"(?:^|(?<=[;\n'\"])|(?<=\\n))([ \t]*import[ \t]+)({_NAMES})(?=\.[\w.]+[ \t]+as\b)", re.M)
_CODE_IMPORT = re.compile(
    rf"(?:^|(?<=[;\n'\"])|(?<=\\n))([ \t]*)import[ \t]+({_NAMES})(?![\w.])(?![ \t]*,)", re.M)
_TOML_DOTTED = re.compile(rf"""(?<=["'])({_NAMES})(?=[.:][A-Za-z_])""")


class NeedsHandEdit(Exception):
    """An import that has no one-to-one ``profdiff.`` form."""


def _line_starts(src: str) -> list[int]:
    starts = [0]
    for line in io.StringIO(src):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], line: int, col: int, src_lines: list[str]) -> int:
    """Character offset of an ast (line, utf-8 byte column) position."""
    text = src_lines[line - 1]
    return starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8"))


def _docstring_nodes(nodes: list[ast.AST]) -> set[int]:
    ids: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                ids.add(id(body[0].value))
    # bare string statements elsewhere (attribute docstrings like ``x = 1`` then """...""")
    for node in nodes:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            ids.add(id(node.value))
    return ids


def _import_edits(node: ast.Import | ast.ImportFrom, seg: str, where: str) -> str | None:
    """The rewritten source of one import statement, or None when it is not ours."""
    if isinstance(node, ast.ImportFrom):
        if node.level or not node.module or node.module.split(".")[0] not in PACKAGES:
            return None
        return re.sub(rf"^(from\s+)({_NAMES})\b", rf"\1{NAMESPACE}.\2", seg, count=1)
    ours = [a for a in node.names if a.name.split(".")[0] in PACKAGES]
    if not ours:
        return None
    if len(node.names) > 1:
        raise NeedsHandEdit(f"{where}: split '{seg}' into one import per line")
    alias = node.names[0]
    if alias.asname:
        return re.sub(rf"^(import\s+)({_NAMES})\b", rf"\1{NAMESPACE}.\2", seg, count=1)
    if "." in alias.name:
        raise NeedsHandEdit(f"{where}: '{seg}' binds the old top-level name; write "
                            f"'import {NAMESPACE}.{alias.name} as ...' or 'from ... import'")
    return f"from {NAMESPACE} import {alias.name}"


def _string_edit(seg: str) -> str:
    seg = _DOTTED_IN_STRING.sub(rf"{NAMESPACE}.\1", seg)
    seg = _CODE_FROM.sub(rf"\1{NAMESPACE}.\2", seg)
    seg = _CODE_IMPORT_AS.sub(rf"\1{NAMESPACE}.\2", seg)
    return _CODE_IMPORT.sub(rf"\1from {NAMESPACE} import \2", seg)


def _is_import_module_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or not node.args:
        return False
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in ("import_module", "__import__", "find_spec", "files")


def rewrite_python(src: str, where: str = "<string>") -> str:
    """``src`` with every absolute import of the old names moved under ``profdiff.``."""
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True) or [""]
    starts = _line_starts(src)
    nodes = list(ast.walk(tree))
    docstrings = _docstring_nodes(nodes)
    edits: list[tuple[int, int, str]] = []

    def span(node: ast.AST) -> tuple[int, int]:
        a = _offset(starts, node.lineno, node.col_offset, lines)  # type: ignore[attr-defined]
        b = _offset(starts, node.end_lineno, node.end_col_offset, lines)  # type: ignore[attr-defined]
        return a, b

    bare_module_args = {id(n.args[0]) for n in nodes if _is_import_module_call(n)}
    # parts of an f-string: rewritten with the whole f-string (their positions are not
    # their own on Python 3.11)
    inside_fstrings = {id(d) for n in nodes if isinstance(n, ast.JoinedStr)
                       for d in ast.walk(n) if d is not n}
    for node in nodes:
        if id(node) in inside_fstrings:
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            a, b = span(node)
            new = _import_edits(node, src[a:b], f"{where}:{node.lineno}")
            if new is not None and new != src[a:b]:
                edits.append((a, b, new))
        elif isinstance(node, ast.JoinedStr) or (
                isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings):
            a, b = span(node)
            seg = src[a:b]
            new = _string_edit(seg)
            if id(node) in bare_module_args:
                new = re.sub(rf"""^([rRuU]?['"])({_NAMES})(['"])$""", rf"\1{NAMESPACE}.\2\3", new)
            if new != seg:
                edits.append((a, b, new))
    _no_overlap(edits, where)
    for a, b, new in sorted(edits, reverse=True):
        src = src[:a] + new + src[b:]
    return src


def _no_overlap(edits: list[tuple[int, int, str]], where: str) -> None:
    """Two rewrites of one stretch of text would corrupt it; keep the outer one."""
    edits.sort()
    keep: list[tuple[int, int, str]] = []
    for e in edits:
        if keep and e[0] < keep[-1][1]:
            if e[1] <= keep[-1][1]:
                continue  # nested in the previous (outer) edit
            raise NeedsHandEdit(f"{where}: overlapping rewrites at offset {e[0]}")
        keep.append(e)
    edits[:] = keep


def rewrite_toml(src: str) -> str:
    """Quoted dotted names (entry points, packages, mypy modules) in a TOML file."""
    out = []
    for line in src.splitlines(keepends=True):
        code, hash_, comment = _split_toml_comment(line)
        out.append(_TOML_DOTTED.sub(rf"{NAMESPACE}.\1", code) + hash_ + comment)
    return "".join(out)


def _split_toml_comment(line: str) -> tuple[str, str, str]:
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i], "#", line[i + 1:]
    return line, "", ""


def _tokenizes(src: str) -> bool:
    try:
        list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return True


def targets(root: Path) -> list[Path]:
    files = [p for d in FOLDERS for p in sorted((root / d).rglob("*.py"))
             if "__pycache__" not in p.parts]
    toml = root / "pyproject.toml"
    return [*files, toml] if toml.exists() else files


def _sort_imports(root: Path, files: list[Path]) -> None:
    """Re-wrap and re-sort the imports of ``files`` the way the project's ruff wants."""
    local = Path(sys.executable).parent / "ruff"
    ruff = str(local) if local.exists() else shutil.which("ruff")
    if not files:
        return
    if ruff is None:
        print("ruff not found: run 'ruff check --fix --select I parsers viewer tests' "
              "to re-wrap imports that grew past the line length", file=sys.stderr)
        return
    subprocess.run([ruff, "check", "--fix", "--select", "I", "--quiet", *map(str, files)],
                   cwd=root, check=False)


def run(root: Path, check: bool, sort_imports: bool = True) -> int:
    changed: list[Path] = []
    problems: list[str] = []
    for path in targets(root):
        src = path.read_text(encoding="utf-8")
        rel = path.relative_to(root)
        if any(line.startswith(OPT_OUT) for line in src.splitlines()):
            continue
        try:
            new = rewrite_toml(src) if path.suffix == ".toml" else rewrite_python(src, str(rel))
        except NeedsHandEdit as e:
            problems.append(str(e))
            continue
        except SyntaxError as e:
            problems.append(f"{rel}:{e.lineno}: not valid Python ({e.msg}); fix it first")
            continue
        if new != src:
            if path.suffix == ".py" and not _tokenizes(new):
                problems.append(f"{rel}: rewrite would not parse; left unchanged")
                continue
            changed.append(rel)
            if not check:
                path.write_text(new, encoding="utf-8")
    for rel in changed:
        print(("would rewrite " if check else "rewrote ") + str(rel))
    if changed and not check and sort_imports:
        _sort_imports(root, [r for r in changed if r.suffix == ".py"])
    for p in problems:
        print("needs a hand edit: " + p, file=sys.stderr)
    if problems:
        return 2
    return 1 if check and changed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if some file still uses the old names")
    p.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this one)")
    p.add_argument("--no-sort", action="store_true",
                   help="do not run ruff's import sorting on the changed files")
    args = p.parse_args(argv)
    return run(args.root.resolve(), args.check, sort_imports=not args.no_sort)


if __name__ == "__main__":
    sys.exit(main())
