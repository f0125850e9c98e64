"""One diverging colour scale for every view (tree Δ cells, flame graph, plots, legend).

Qt-free: colours are ``(r, g, b)`` tuples (0-255); Qt adapters wrap them in ``QColor``.

The scale maps a signed change to a colour: a grey dead zone for changes too small to
matter, then a ramp from a pale tint to a saturated colour at ``clamp``.  Two palettes:

* ``"red-green"`` - regressions red, improvements green (what profilers usually show);
* ``"colorblind"`` - regressions orange/red-brown, improvements blue (safe for the common
  red-green colour-vision deficiencies; from ColorBrewer's PuOr/RdBu families).

Values are passed already oriented: positive = worse (the caller flips the sign of
metrics where higher is better).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RGB = tuple[int, int, int]

PALETTES: dict[str, tuple[RGB, RGB, RGB, RGB, RGB]] = {
    # (strong worse, pale worse, neutral, pale better, strong better)
    "red-green": ((200, 30, 30), (250, 215, 210), (235, 235, 235), (212, 240, 212), (30, 150, 50)),
    "colorblind": ((179, 88, 6), (253, 224, 182), (235, 235, 235), (209, 229, 240), (33, 102, 172)),
}
ADDED: RGB = (255, 236, 153)  # new in the current run
REMOVED: RGB = (210, 210, 210)  # gone from the current run
PLACEHOLDER: RGB = (245, 245, 245)  # greyed row standing in for an unmatched node


@dataclass(frozen=True)
class DivergingScale:
    """Maps oriented changes (positive = worse) to colours.

    ``dead_zone``: |change| at or below it is neutral grey; ``clamp``: |change| at which
    the colour is fully saturated.  Both are in the unit of the values given (e.g.
    percentage points of the run, or a relative change of 0.1 = 10 %).
    """

    dead_zone: float = 0.1
    clamp: float = 5.0
    palette: str = "red-green"

    def colors(self, change: np.ndarray) -> np.ndarray:
        """uint8[n, 3] colours for an array of oriented changes (NaN -> neutral)."""
        strong_w, pale_w, neutral, pale_b, strong_b = (np.array(c, float) for c in
                                                       PALETTES[self.palette])
        c = np.nan_to_num(np.asarray(change, dtype=float), nan=0.0)
        mag = np.abs(c)
        span = max(self.clamp - self.dead_zone, 1e-12)
        t = np.clip((mag - self.dead_zone) / span, 0.0, 1.0)[:, None]
        worse = pale_w + (strong_w - pale_w) * t
        better = pale_b + (strong_b - pale_b) * t
        out = np.where((c > 0)[:, None], worse, better)
        out[mag <= self.dead_zone] = neutral
        return out.round().astype(np.uint8)

    def color(self, change: float) -> RGB:
        r, g, b = self.colors(np.array([change]))[0]
        return int(r), int(g), int(b)

    def legend_stops(self, n: int = 7) -> list[tuple[float, RGB]]:
        """Evenly spaced (value, colour) pairs from -clamp to +clamp for a legend bar."""
        vals = np.linspace(-self.clamp, self.clamp, n)
        return [(float(v), (int(c[0]), int(c[1]), int(c[2])))
                for v, c in zip(vals, self.colors(vals), strict=True)]


def text_color_for(bg: RGB) -> RGB:
    """Black or white, whichever reads better on ``bg`` (relative luminance)."""
    r, g, b = bg
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return (0, 0, 0) if lum > 140 else (255, 255, 255)
