"""Rename rules: make cost centres match across refactors before runs are aligned.

Real regressions come with refactors: a module moves (``HordeAd.Core.Delta`` ->
``HordeAd.Internal.Delta``), a function is renamed, a build adds ``$w``/``$s`` prefixes or
``_x1y2`` suffixes.  Matching by exact key then shows the culprit as one removed and one
added row and hides its delta.  Rules rewrite every run's frame keys (``module`` +
``name``) *before* alignment, symmetrically in all runs, so subtrees below a renamed node
match too.

Rule kinds:

* :class:`ModuleRename` - ``OLD=NEW`` on the module, exact or as a dotted prefix;
* :class:`NameRename` - ``OLD=NEW`` on the name; ``Module:name`` restricts it to a module;
* :class:`RegexRewrite` - a regular expression substitution on names (or modules);
* presets (:data:`PRESETS`): ``ghc`` strips worker/specialisation prefixes, GHC-generated
  numbering and uniques, hex addresses and GHC 9.10's ``GHC.Internal.`` module prefix.

Rules come from the command line (``--rename``, ``--rename-module``, ``--rename-regex``,
``--normalize``), from a ``.profdiff.toml`` next to the runs, and from the GUI's rules
editor, which saves to the same file.  Rules are plain data (dataclasses) so they round-trip
through TOML; each is a vectorised callable over an object array of keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from profdiff.parsers.errors import ProfdiffError

from .rules_file import RULES_FILE, find_rules_file  # noqa: F401  (re-exported)

if TYPE_CHECKING:  # the rules are parsed at start-up, before anything needs numpy
    import numpy as np

SEP = "\x1f"


class RuleError(ProfdiffError):
    """A rule that does not parse (bad ``OLD=NEW``, invalid regex, bad TOML)."""


def _split(keys: np.ndarray) -> tuple[list[str], list[str]]:
    mods, names = [], []
    for k in keys.tolist():
        m, _, n = k.partition(SEP)
        mods.append(m)
        names.append(n)
    return mods, names


def _join(mods: Sequence[str], names: Sequence[str]) -> np.ndarray:
    import numpy as np

    return np.array([f"{m}{SEP}{n}" for m, n in zip(mods, names, strict=True)], dtype=object)


@dataclass(frozen=True)
class ModuleRename:
    old: str
    new: str
    prefix: bool = True  # also rename submodules Old.X -> New.X
    origin: str = "rule"  # "suggestion" for a module move found by auto-matching

    def rewrite_module(self, m: str) -> str:
        if m == self.old:
            return self.new
        if self.prefix and m.startswith(self.old + "."):
            return self.new + m[len(self.old):]
        return m

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        mods, names = _split(keys)
        return _join([self.rewrite_module(m) for m in mods], names)

    def describe(self) -> str:
        return f"module {self.old} -> {self.new}"


@dataclass(frozen=True)
class NameRename:
    old: str
    new: str
    module: str | None = None  # restrict to this module (after module renames)

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        mods, names = _split(keys)
        out = [
            self.new if n == self.old and (self.module is None or m == self.module) else n
            for m, n in zip(mods, names, strict=True)
        ]
        return _join(mods, out)

    def describe(self) -> str:
        where = f" (in {self.module})" if self.module else ""
        return f"name {self.old} -> {self.new}{where}"


@dataclass(frozen=True)
class RegexRewrite:
    pattern: str
    replacement: str = ""
    target: str = "name"  # "name" or "module"

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as e:
            raise RuleError(f"invalid regular expression {self.pattern!r}: {e}") from e
        if self.target not in ("name", "module"):
            raise RuleError(f"regex rule target must be 'name' or 'module', not {self.target!r}")

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        rx = re.compile(self.pattern)
        mods, names = _split(keys)
        if self.target == "name":
            names = [rx.sub(self.replacement, n) for n in names]
        else:
            mods = [rx.sub(self.replacement, m) for m in mods]
        return _join(mods, names)

    def describe(self) -> str:
        return f"{self.target} s/{self.pattern}/{self.replacement}/"


@dataclass(frozen=True)
class KeyMap:
    """Exact key -> key mapping; what an accepted match suggestion becomes."""

    pairs: tuple[tuple[str, str], ...]
    origin: str = "rule"  # "suggestion" when it came from accepted match suggestions

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        mapping = dict(self.pairs)
        import numpy as np

        return np.array([mapping.get(k, k) for k in keys.tolist()], dtype=object)

    def describe(self) -> str:
        return ", ".join(f"{a.replace(SEP, '.')} -> {b.replace(SEP, '.')}" for a, b in self.pairs)


Rule = ModuleRename | NameRename | RegexRewrite | KeyMap

PRESETS: dict[str, tuple[RegexRewrite, ...]] = {
    "ghc": (
        RegexRewrite(r"^\$[ws](?=[^$])", ""),  # $wfoo / $sfoo worker and specialisation
        RegexRewrite(r"_[a-z][0-9]+[a-z][0-9]+$", ""),  # foo_x1y2 generated suffixes
        RegexRewrite(r"^(sat_s|lvl|ds|wild|eta)[0-9A-Za-z]*$", r"\1"),  # numbered binders
        RegexRewrite(r"^CAF:([A-Za-z_$][\w'$]*?)[0-9]+$", r"CAF:\1"),  # CAF:main11
        RegexRewrite(r"\{[a-z] [A-Za-z0-9]+\}", ""),  # ticky uniques {v skDS}
        RegexRewrite(r"0x[0-9a-fA-F]+", "0x…"),  # hex addresses
        RegexRewrite(r"^GHC\.Internal\.", "GHC.", target="module"),  # GHC 9.10
    ),
    "perf": (
        RegexRewrite(r"\.(constprop|isra|part|cold|lto_priv)\.[0-9]+", ""),  # GCC clones
        RegexRewrite(r"::h[0-9a-f]{16}$", ""),  # Rust legacy mangling hash
        RegexRewrite(r"\+0x[0-9a-f]+$", ""),
    ),
}


def parse_pair(text: str, what: str) -> tuple[str, str]:
    old, sep, new = text.partition("=")
    if not sep or not old:
        raise RuleError(f"{what} {text!r}: expected OLD=NEW")
    return old, new


def name_rule(text: str) -> NameRename:
    """``OLD=NEW`` or ``Module:OLD=NEW`` (restricted to one module)."""
    old, new = parse_pair(text, "--rename")
    module = None
    if ":" in old and not old.startswith("CAF:"):
        module, old = old.split(":", 1)
        if ":" in new:
            new = new.split(":", 1)[1]
    return NameRename(old, new, module)


def regex_rule(text: str, target: str = "name") -> RegexRewrite:
    """``PATTERN=REPLACEMENT`` (the last ``=`` splits, so patterns may contain ``=``)."""
    pat, sep, repl = text.rpartition("=")
    if not sep or not pat:
        raise RuleError(f"--rename-regex {text!r}: expected PATTERN=REPLACEMENT")
    return RegexRewrite(pat, repl, target)


def preset_rules(names: Iterable[str]) -> list[RegexRewrite]:
    out: list[RegexRewrite] = []
    for n in names:
        if n not in PRESETS:
            raise RuleError(f"unknown normalisation preset {n!r}; presets: {', '.join(PRESETS)}")
        out += PRESETS[n]
    return out


# ------------------------------------------------------------------------------------------
# .profdiff.toml
# ------------------------------------------------------------------------------------------
def load_rules_file(path: Path) -> list[Rule]:
    """Rules from a ``.profdiff.toml``::

        [rename]
        modules = { "HordeAd.Core.Delta" = "HordeAd.Internal.Delta" }
        names = { "buildVectors.eval0" = "buildFinMaps.eval0" }
        regex = [ ["^\\\\$w", ""] ]          # [pattern, replacement(, "module")]
        normalize = ["ghc"]
        [[rename.keys]]                     # accepted suggestions
        old = "AD.Dual.sigmoidD"
        new = "AD.Dual.logisticD"
    """
    import tomllib

    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise RuleError(f"{path}: cannot read rename rules: {e}") from e
    sec = doc.get("rename", {})
    rules: list[Rule] = [ModuleRename(o, n) for o, n in sec.get("modules", {}).items()]
    for o, n in sec.get("names", {}).items():
        rules.append(name_rule(f"{o}={n}"))
    for item in sec.get("regex", []):
        if not isinstance(item, list) or not 1 <= len(item) <= 3:
            raise RuleError(f"{path}: rename.regex entries are [pattern, replacement, target?]")
        rules.append(RegexRewrite(item[0], item[1] if len(item) > 1 else "",
                                  item[2] if len(item) > 2 else "name"))
    rules += preset_rules(sec.get("normalize", []))
    keys = [(k["old"], k["new"]) for k in sec.get("keys", [])]
    if keys:
        rules.append(KeyMap(tuple((_dotted_to_key(o), _dotted_to_key(n)) for o, n in keys)))
    return rules


def _dotted_to_key(s: str) -> str:
    """``Module.name`` as written in the rules file -> internal key (module is the part
    before ``|`` if given as ``Module|name``, else split at the last capitalised segment)."""
    if "|" in s:
        m, n = s.split("|", 1)
        return f"{m}{SEP}{n}"
    parts = s.split(".")
    i = 0
    while i < len(parts) - 1 and parts[i][:1].isupper():
        i += 1
    return f"{'.'.join(parts[:i])}{SEP}{'.'.join(parts[i:])}"


def key_to_dotted(key: str) -> str:
    m, _, n = key.partition(SEP)
    return f"{m}|{n}" if m and not m[:1].isupper() else (f"{m}.{n}" if m else n)


def save_rules_file(path: Path, rules: Sequence[Rule], presets: Sequence[str] = ()) -> None:
    """Write rules in the format :func:`load_rules_file` reads (the GUI editor uses this)."""
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    mods = [r for r in rules if isinstance(r, ModuleRename)]
    names = [r for r in rules if isinstance(r, NameRename)]
    regex = [r for r in rules if isinstance(r, RegexRewrite)]
    keymaps = [r for r in rules if isinstance(r, KeyMap)]
    lines = ["# profdiff rename rules (read by the CLI and the app)", "[rename]"]
    if mods:
        lines.append("modules = { " + ", ".join(f"{q(r.old)} = {q(r.new)}" for r in mods) + " }")
    if names:
        entries = [f"{q((r.module + ':' if r.module else '') + r.old)} = {q(r.new)}" for r in names]
        lines.append("names = { " + ", ".join(entries) + " }")
    if regex:
        lines.append("regex = [ " + ", ".join(
            f"[{q(r.pattern)}, {q(r.replacement)}, {q(r.target)}]" for r in regex) + " ]")
    if presets:
        lines.append("normalize = [ " + ", ".join(q(p) for p in presets) + " ]")
    for km in keymaps:
        for o, n in km.pairs:
            lines += ["", "[[rename.keys]]", f"old = {q(key_to_dotted(o))}",
                      f"new = {q(key_to_dotted(n))}"]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


