"""fitalloc map --engine: the fast engine's pages over a trace's replay, with meshing if asked.

fitalloc-replay --engine --map-out DIR writes, at each sample point, every page in use
(CONFIG.pages.csv: op, start, block_size, capacity, used, shared, returned) and the heap's
series (CONFIG.series.csv). Drawn in three panels sharing the operation axis:
- the pages, one row each in address order: the share of its blocks in use (viridis, as the
  lab's maps colour blocks), mixed with blue by the share of its memory meshing took away
  (frames sharing a physical page with another page's, or given back with no live block);
  white where the page is not in use;
- the engine's memory (its committed bytes: meshed pages counted once) at each sample point,
  after that point's mesh pass, its peak over every operation (which a sample may miss, and
  which comes before the mesh passes), and the live bytes;
- the bytes of pages meshed and given back.
The replay defers purging (docs/replay.md, "The engine row"): nothing goes back to the OS but
what meshing gives back."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .errors import CommandError
from .units import human_bytes

MESHED_COLOUR = np.array([0.25, 0.55, 1.0])
# How far a wholly meshed page's colour goes towards blue: its share in use stays visible.
MESHED_MIX = 0.65
ABSENT_COLOUR = np.array([1.0, 1.0, 1.0])
PNG_OPTIONS = {"compress_level": 3}


@dataclass
class PageMap:
    config: str
    ops: np.ndarray  # the sample points' operations
    occupancy: np.ndarray  # pages x samples: used / capacity, NaN where not in use
    meshed: np.ndarray  # pages x samples: (shared + returned) / page bytes
    heap: np.ndarray  # per sample: the engine's bytes
    live: np.ndarray
    shared: np.ndarray  # per sample: bytes of pages sharing physical memory
    returned: np.ndarray

    @property
    def pages(self) -> int:
        return self.occupancy.shape[0]


def _table(path: str) -> np.ndarray:
    """A CSV file of integers as a 2-D array, its header skipped."""
    try:
        with open(path) as f:
            data = np.loadtxt(f, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    except OSError as e:
        raise CommandError(f"{path}: {e.strerror}") from None
    except ValueError as e:
        raise CommandError(f"{path}: not a table of numbers ({e})") from None
    return data


def load(directory: str, config: str) -> PageMap:
    """The pages and series files of one engine configuration."""
    series = _table(os.path.join(directory, f"{config}.series.csv"))
    pages = _table(os.path.join(directory, f"{config}.pages.csv"))
    if not len(series):
        raise CommandError(f"{config}: the replay wrote no sample points")
    ops = series[:, 0]
    op, start, block_size, capacity, used, shared, returned = (pages[:, i] for i in range(7))
    column = np.searchsorted(ops, op)  # every page row was taken at a sample point
    starts, row = np.unique(start, return_inverse=True)
    shape = (max(len(starts), 1), len(ops))
    occupancy = np.full(shape, np.nan)
    meshed = np.zeros(shape)
    occupancy[row, column] = used / np.maximum(capacity, 1)
    meshed[row, column] = np.minimum(
        1.0, (shared + returned) / np.maximum(capacity * block_size, 1))
    per_sample = np.zeros(len(ops))
    shared_bytes, returned_bytes = per_sample.copy(), per_sample.copy()
    np.add.at(shared_bytes, column, shared)
    np.add.at(returned_bytes, column, returned)
    return PageMap(config, ops, occupancy, meshed, series[:, 1].astype(float),
                   series[:, 2].astype(float), shared_bytes, returned_bytes)


def colours(pm: PageMap, plt) -> np.ndarray:
    """The page panel as RGB, pages up, samples across."""
    used = plt.get_cmap("viridis")(np.nan_to_num(pm.occupancy))[..., :3]
    mix = MESHED_MIX * pm.meshed[..., None]
    rgb = used * (1 - mix) + MESHED_COLOUR * mix
    rgb[np.isnan(pm.occupancy)] = ABSENT_COLOUR
    return rgb


def draw(pm: PageMap, title: str, out: str, plt, peak: float) -> str:
    """Write the image; a one-line summary of what it shows. `peak`: the engine's peak
    committed bytes over every operation (the replay row's peak_heap)."""
    fig, (top, mid, bottom) = plt.subplots(
        3, 1, figsize=(12, 8), sharex=True, gridspec_kw={"height_ratios": [5, 1.6, 1.6]})
    xmax = float(pm.ops[-1] + 1)
    top.imshow(colours(pm, plt), aspect="auto", origin="lower", interpolation="nearest",
               extent=(0.0, xmax, 0.0, float(pm.pages)))
    top.set_ylabel(f"pages ({pm.pages:,}, by address)")
    top.set_title(title + "\ncolour: share of a page's blocks in use (viridis: dark purple "
                  "empty, yellow full), tinted blue by the share of its memory meshed or given "
                  "back", fontsize=9, loc="left")
    mid.plot(pm.ops, pm.heap / 2**20,
             label="engine memory at each sample point (committed; meshed pages once)")
    mid.plot(pm.ops, pm.live / 2**20, label="live bytes")
    mid.axhline(peak / 2**20, color="tab:red", ls="--", lw=0.8,
                label=f"peak committed, at any operation: {human_bytes(peak)}")
    mid.set_ylabel("MiB")
    mid.legend(fontsize=8, loc="upper left")
    bottom.plot(pm.ops, pm.shared / 2**20, label="in pages sharing physical memory",
                color=MESHED_COLOUR)
    bottom.plot(pm.ops, pm.returned / 2**20, label="given back, no live block", color="grey")
    bottom.set_ylabel("MiB")
    bottom.set_xlabel("operation")
    bottom.legend(fontsize=8, loc="upper left")
    bottom.set_xlim(0.0, xmax)
    fig.savefig(out, dpi=100, pil_kwargs=PNG_OPTIONS)
    plt.close(fig)
    end = len(pm.ops) - 1
    return (f"{pm.config}, {int(pm.ops[-1]) + 1:,} operations, {pm.pages:,} pages; at the end "
            f"{human_bytes(pm.heap[end])} committed for {human_bytes(pm.live[end])} live, "
            f"{human_bytes(pm.shared[end])} in meshed pages; peak {human_bytes(peak)} "
            f"committed at any operation, {human_bytes(pm.heap.max())} at the sample points; "
            f"purging deferred")
