"""Drawing heap maps with matplotlib: one configuration (fitalloc map) or several side by side
on the same scales with the replay table (fitalloc compare).

Each map is three panels sharing the operation axis: the heap (addresses up; used blocks
coloured by size on a log scale, free space inside the heap in salmon, white above the heap),
then the heap's size and the live bytes, then the two fragmentation metrics. Margins are fixed
in inches rather than computed by matplotlib's layout engines, which take most of the time."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import mapdata
from .units import human_bytes

FREE_COLOUR = np.array([0.96, 0.66, 0.62])  # free bytes inside the heap
OUTSIDE_COLOUR = np.array([1.0, 1.0, 1.0])  # above the heap's break
COLOURMAP = "viridis"  # used blocks, by log2 size; it has no red, so free space stands out
PANEL_RATIOS = [5, 1.6, 1.6]
# zlib level of the PNGs: the maps are flat areas, level 3 is as small and much faster.
PNG_OPTIONS = {"compress_level": 3}


@dataclass
class Scale:
    """What several maps share so that they compare: the axes and the colours."""

    xmax: float
    ymax: float
    log_lo: float  # log2 of the smallest block size
    log_hi: float  # log2 of the largest

    @classmethod
    def of(cls, maps: list[mapdata.HeapMap]) -> "Scale":
        xmax = max(hm.ops for hm in maps)
        ymax = max([hm.top for hm in maps] + [1.0])
        ranges = [r for r in (hm.size_range() for hm in maps) if r is not None]
        lo = math.log2(max(1.0, min(r[0] for r in ranges))) if ranges else 4.0
        hi = math.log2(max(1.0, max(r[1] for r in ranges))) if ranges else 4.0
        return cls(float(xmax), ymax, lo, max(hi, lo + 1.0))


_UNIT_NAMES = {1.0: "B", 1024.0: "KiB", 1024.0 ** 2: "MiB", 1024.0 ** 3: "GiB"}


def byte_ticks(top: float, ticks: int = 5) -> tuple[float, float]:
    """(step, unit) of the ticks of an axis of [0, top] bytes: the unit (B, KiB, MiB, GiB) in
    which top is below 2048, and a step of 1, 2, 2.5 or 5 times a power of ten of it."""
    unit = 1.0
    while top / unit >= 2048 and unit < 1024.0 ** 3:
        unit *= 1024
    raw = max(top / unit / ticks, 1e-9)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return max(step * unit, 1.0), unit


def bytes_axis(axis, top: float) -> None:
    """Ticks of an axis of [0, top] bytes in one unit (B, KiB, MiB or GiB): "5 MiB"."""
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    step, unit = byte_ticks(top)
    axis.set_major_locator(MultipleLocator(step))
    axis.set_major_formatter(FuncFormatter(
        lambda v, _: "0" if v == 0 else f"{v / unit:g} {_UNIT_NAMES[unit]}" if v > 0 else ""))


def _tick_count(v: float, _pos=None) -> str:
    """Operation numbers without matplotlib's "1e6" offset: 500, 20k, 1.5M."""
    for above, div, suffix in ((1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if abs(v) >= above:
            return f"{v / div:.{0 if v % div == 0 else 1}f}{suffix}"
    return f"{v:.0f}"


def _tick_bytes(v: float) -> str:
    """human_bytes without a useless decimal: "64 KiB", "2.5 MiB"."""
    return human_bytes(v).replace(".0 ", " ")


def image(hm: mapdata.HeapMap, scale: Scale, width: int, height: int, plt) -> np.ndarray:
    """The map as RGB pixels (row 0 at address 0): each cell's colours mixed by area."""
    c = mapdata.cells(hm, scale.xmax, scale.ymax, width, height)
    shade = np.clip((c.log_size - scale.log_lo) / (scale.log_hi - scale.log_lo), 0.0, 1.0)
    used_colour = plt.get_cmap(COLOURMAP)(shade)[..., :3]
    return (OUTSIDE_COLOUR * (1.0 - c.heap)[..., None]
            + FREE_COLOUR * (c.heap - c.used)[..., None]
            + used_colour * c.used[..., None])


def _colourbar(fig, scale: Scale, plt, top, x: float, width: float) -> None:
    """The block-size scale at figure x, as high as the map panel `top`."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import LogNorm

    mappable = ScalarMappable(norm=LogNorm(2.0 ** scale.log_lo, 2.0 ** scale.log_hi),
                              cmap=plt.get_cmap(COLOURMAP))
    box = top.get_position()  # final: the figures use fixed margins, no layout engine
    bar = fig.colorbar(mappable, cax=fig.add_axes([x, box.y0, width, box.height]))
    bar.ax.set_title("block\nsize", fontsize=9)
    # Ticks at powers of two, at most about eight of them, in bytes.
    lo, hi = math.ceil(scale.log_lo), math.floor(scale.log_hi)
    every = max(1, math.ceil((hi - lo + 1) / 8))
    bar.set_ticks([2.0 ** e for e in range(lo, hi + 1, every)],
                  labels=[_tick_bytes(2.0 ** e) for e in range(lo, hi + 1, every)])
    bar.minorticks_off()


def draw(axes, hm: mapdata.HeapMap, scale: Scale, cells: tuple[int, int], plt,
         first: bool = True, title: str | None = None) -> None:
    """The three panels of one map into axes (top, middle, bottom). Side by side (with a
    title over each map), the first map carries the axis labels and the legends."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    top, mid, bottom = axes
    width, height = cells
    top.imshow(image(hm, scale, width, height, plt), origin="lower", aspect="auto",
               extent=(0, scale.xmax, 0, scale.ymax), interpolation="antialiased")
    top.set_xlim(0, scale.xmax)
    top.set_ylim(0, scale.ymax)
    if title:
        top.set_title(title, fontsize=11, fontweight="bold")

    curves = hm.curves()
    op = curves["op"]
    mid.step(op, curves["heap"], where="post", color="tab:red", lw=1.2, label="heap")
    mid.step(op, curves["live"], where="post", color="tab:blue", lw=1.2, label="live")
    mid.set_ylim(0, scale.ymax * 1.05)
    bottom.plot(op, curves["frag_free"], color="tab:orange", lw=1.2, label="free / heap")
    bottom.plot(op, curves["frag_largest"], color="tab:purple", lw=1.2,
                label="1 - largest free / free")
    bottom.set_ylim(0, 1.02)
    bottom.set_xlabel("operation (program order)")
    bottom.xaxis.set_major_formatter(FuncFormatter(_tick_count))
    if title is not None:
        # Narrow panels side by side: fewer operation ticks, so that neighbours' do not touch.
        bottom.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    for ax in (top, mid):
        bytes_axis(ax.yaxis, scale.ymax)
        ax.tick_params(labelbottom=False)
    if first:
        top.set_ylabel("address in the heap")
        mid.set_ylabel("bytes")
        bottom.set_ylabel("fragmentation")
        top.legend(handles=[Patch(facecolor=FREE_COLOUR, label="free"),
                            Patch(facecolor=OUTSIDE_COLOUR, edgecolor="0.6",
                                  label="beyond the heap")],
                   loc="upper left", fontsize=7, framealpha=0.85)
        mid.legend(loc="upper left", fontsize=7)
        bottom.legend(loc="upper left", fontsize=7)
    else:
        for ax in axes:
            ax.tick_params(labelleft=False)


def _save(fig, out: str, dpi: int) -> None:
    """Into `out`, in the format of its extension; closes the figure."""
    try:
        if out.lower().endswith(".png"):
            fig.savefig(out, dpi=dpi, pil_kwargs=PNG_OPTIONS)
        else:
            fig.savefig(out, dpi=dpi)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def _panels(fig, grid, col: int, share=None):
    top = fig.add_subplot(grid[0, col], sharex=share, sharey=share)
    share = share or top
    return [top, fig.add_subplot(grid[1, col], sharex=share),
            fig.add_subplot(grid[2, col], sharex=share)]


def single(hm: mapdata.HeapMap, title: str, out: str, cells: tuple[int, int], plt,
           scale: Scale | None = None) -> None:
    """One configuration in one figure, written to `out` (format by extension); on its own
    scales, or on those of the maps it is compared with."""
    scale = scale or Scale.of([hm])
    w, h = 12.0, 9.0
    fig = plt.figure(figsize=(w, h))
    grid = fig.add_gridspec(3, 1, height_ratios=PANEL_RATIOS, left=1.0 / w, right=1 - 1.6 / w,
                            bottom=0.6 / h, top=1 - 0.5 / h, hspace=0.08)
    axes = _panels(fig, grid, 0)
    draw(axes, hm, scale, cells, plt)
    _colourbar(fig, scale, plt, axes[0], 1 - 1.4 / w, 0.18 / w)
    fig.suptitle(title, y=1 - 0.12 / h)
    _save(fig, out, dpi=110)


# The replay table under the compare maps: a few columns that fit, in text that can be read
# when the sheet is seen at a screen's width.
TABLE_POINTS, ROW_INCHES = 16, 0.42
TABLE_COLUMNS = [("config", "config"), ("peak heap", "peak_heap"), ("end heap", "end_heap"),
                 ("peak live", "peak_live"), ("frag free", "frag_free_mean"),
                 ("frag largest", "frag_largest_mean"), ("free blocks", "free_blocks_mean"),
                 ("splits", "splits"), ("coalesces", "coalesces"), ("mean ns", "mean_ns"),
                 ("failed", "failed")]


def _table_cell(field: str, v) -> str:
    if v is None:
        return "-"
    if field in ("peak_heap", "end_heap", "peak_live"):
        return human_bytes(v)
    if field.startswith("frag_"):
        return f"{v:.4f}"
    if isinstance(v, float):
        return f"{v:,.1f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def side_by_side(maps: list[mapdata.HeapMap], rows: list[dict], title: str, out: str,
                 cells: tuple[int, int], plt) -> None:
    """Every map in one figure on the same scales (Scale.of(maps)), the table under them."""
    scale = Scale.of(maps)
    n = len(maps)
    # WHY large table text: with eight maps the sheet is about 3,000 pixels wide and is seen
    # shrunk to a screen's width, where the default 9-point text cannot be read.
    maps_h, table_h = 8.5, ROW_INCHES * (len(rows) + 1)
    w, h = max(8.0, 3.6 * n + 2.3), maps_h + table_h + 0.5
    fig = plt.figure(figsize=(w, h))
    bottom = (table_h + 0.9) / h
    grid = fig.add_gridspec(3, n, height_ratios=PANEL_RATIOS, left=1.0 / w, right=1 - 1.6 / w,
                            bottom=bottom, top=1 - 0.65 / h, hspace=0.08, wspace=0.12)
    share = None
    for col, hm in enumerate(maps):
        axes = _panels(fig, grid, col, share)
        share = share or axes[0]
        draw(axes, hm, scale, cells, plt, first=col == 0, title=hm.config)
    _colourbar(fig, scale, plt, share, 1 - 1.4 / w, 0.18 / w)

    table_ax = fig.add_axes([1.0 / w, 0.15 / h, 1 - 2.6 / w, table_h / h])
    table_ax.axis("off")
    text = [[_table_cell(f, r.get(f)) for _, f in TABLE_COLUMNS] for r in rows]
    table = table_ax.table(cellText=text, colLabels=[h for h, _ in TABLE_COLUMNS],
                           loc="center", cellLoc="right", bbox=[0, 0, 1, 1])
    table.auto_set_font_size(False)
    table.set_fontsize(TABLE_POINTS)
    for (r, c), cell in table.get_celld().items():
        if c == 0:
            cell.set_text_props(ha="left")
            cell.PAD = 0.04
    fig.suptitle(title, y=1 - 0.15 / h, fontsize=TABLE_POINTS)
    _save(fig, out, dpi=100)
