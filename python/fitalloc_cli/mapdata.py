"""A heap map's data: the blocks and the series fitalloc-replay writes for one configuration
(--map-out), and the map itself as an image of cells.

Any number of blocks draws at the same cost: instead of one rectangle per block (matplotlib
slows to minutes past a few hundred thousand), every block is added into a grid of cells
(operations across, addresses up) by the area of each cell it covers. A cell then holds the
fraction of its area used by blocks, the area-weighted mean log2 size of those blocks, and the
fraction inside the heap; blocks smaller than a cell blend with their neighbours instead of
disappearing."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from .errors import CommandError

BLOCKS_HEADER = "alloc_op,free_op,offset,size"
SERIES_HEADER = "op,heap_bytes,live_bytes,free_bytes,largest_free,free_blocks"
# Blocks added to the grid at a time (bounds the memory of the index arrays).
_CHUNK = 1 << 18


@dataclass
class HeapMap:
    config: str
    ops: int  # operations replayed: the x axis is [0, ops)
    blocks: np.ndarray  # int64 (n, 4): alloc_op, free_op (-1: live at the end), offset, size
    series: np.ndarray  # float64 (m, 6): the columns of SERIES_HEADER

    @property
    def top(self) -> float:
        """The highest address the map shows: the heap's largest size or a block's end."""
        top = float(self.series[:, 1].max()) if len(self.series) else 0.0
        if len(self.blocks):
            top = max(top, float((self.blocks[:, 2] + self.blocks[:, 3]).max()))
        return top

    def size_range(self) -> tuple[float, float] | None:
        """(smallest, largest) block size, or None without blocks."""
        if not len(self.blocks):
            return None
        return float(self.blocks[:, 3].min()), float(self.blocks[:, 3].max())

    def curves(self) -> dict[str, np.ndarray]:
        """The series as the map's curves: op, heap, live, and the two fragmentation metrics."""
        s = self.series
        heap, free, largest = s[:, 1], s[:, 3], s[:, 4]
        with np.errstate(divide="ignore", invalid="ignore"):
            frag_free = np.where(heap > 0, free / heap, 0.0)
            frag_largest = np.where(free > 0, 1.0 - largest / free, 0.0)
        return {"op": s[:, 0], "heap": heap, "live": s[:, 2], "frag_free": frag_free,
                "frag_largest": frag_largest}


def _read(path: str, header: str, dtype) -> np.ndarray:
    columns = header.count(",") + 1
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline().strip()
            if first != header:
                raise CommandError(f"{path}: the first line is '{first[:80]}', "
                                   f"expected '{header}'")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data": an empty map
                data = np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file (fitalloc-replay --map-out wrote no map for "
                           "this configuration)") from None
    except ValueError as e:
        raise CommandError(f"{path}: not {columns} numbers per line ({e})") from None
    if data.size == 0:
        return np.zeros((0, columns), dtype=dtype)
    if data.shape[1] != columns:
        raise CommandError(f"{path}: {data.shape[1]} columns, expected {columns}")
    return data


def load(directory: str, config: str, ops: int | None = None) -> HeapMap:
    """The map of `config` from fitalloc-replay's --map-out directory; `ops` from its row."""
    blocks = _read(os.path.join(directory, f"{config}.blocks.csv"), BLOCKS_HEADER, np.int64)
    series = _read(os.path.join(directory, f"{config}.series.csv"), SERIES_HEADER, np.float64)
    last = 0
    if len(blocks):
        last = max(last, int(blocks[:, 0].max()) + 1, int(blocks[:, 1].max()) + 1)
    if len(series):
        last = max(last, int(series[:, 0].max()) + 1)
    return HeapMap(config, max(int(ops or 0), last, 1), blocks, series)


def _steps(pos: np.ndarray, scale: float, n: int):
    """A step at each position along an axis of n cells: (cell, weight in it, weight in the
    next), such that the running sum over cells is 0 before the position, the fraction of the
    position's cell after it, and 1 beyond."""
    c = np.clip(pos * (n / scale), 0, n)
    i = np.floor(c).astype(np.int64)
    f = c - i
    return i, 1.0 - f, f


def area_cover(x0, x1, y0, y1, weight, xmax: float, ymax: float, width: int,
               height: int) -> np.ndarray:
    """Per cell of a height x width grid over [0, xmax) x [0, ymax): the sum over rectangles
    [x0, x1) x [y0, y1) of weight x the fraction of the cell's area the rectangle covers.

    A rectangle's indicator is the sum of four corner steps (+ at (x0, y0) and (x1, y1), - at
    the two others), each the product of a step along x and one along y; a step is two entries
    in a difference grid, so a rectangle is 16 entries whatever its size, and two running sums
    turn the grid into the coverage."""
    stride = width + 2
    grid = np.zeros((height + 2) * stride)
    for start in range(0, len(x0), _CHUNK):
        part = slice(start, start + _CHUNK)
        idx, val = [], []
        for xs, sx in ((x0[part], 1.0), (x1[part], -1.0)):
            ix, ax_here, ax_next = _steps(xs, xmax, width)
            for ys, sy in ((y0[part], 1.0), (y1[part], -1.0)):
                iy, ay_here, ay_next = _steps(ys, ymax, height)
                w = weight[part] * (sx * sy)
                for dx, ax in ((0, ax_here), (1, ax_next)):
                    for dy, ay in ((0, ay_here), (1, ay_next)):
                        idx.append((iy + dy) * stride + ix + dx)
                        val.append(w * ax * ay)
        grid += np.bincount(np.concatenate(idx), weights=np.concatenate(val),
                            minlength=grid.size)
    cover = grid.reshape(height + 2, stride).cumsum(axis=0).cumsum(axis=1)
    return cover[:height, :width]


@dataclass
class Cells:
    used: np.ndarray  # fraction of each cell's area covered by blocks, in [0, 1]
    log_size: np.ndarray  # area-weighted mean log2 block size of the used part (0: unused)
    heap: np.ndarray  # fraction of each cell's area inside the heap, >= used


def cells(hm: HeapMap, xmax: float, ymax: float, width: int, height: int) -> Cells:
    """The map of hm as a grid of cells (row 0 at address 0) over [0, xmax) x [0, ymax)."""
    b = hm.blocks.astype(np.float64)
    alloc, free, offset, size = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    end = np.where(free < 0, float(hm.ops), free)
    ones = np.ones(len(b))
    used = area_cover(alloc, end, offset, offset + size, ones, xmax, ymax, width, height)
    log_sum = area_cover(alloc, end, offset, offset + size, np.log2(np.maximum(size, 1.0)),
                         xmax, ymax, width, height)
    s = hm.series
    # The heap between two samples is the earlier sample's (step after each point).
    if len(s):
        x_next = np.append(s[1:, 0], float(hm.ops))
        zeros = np.zeros(len(s))
        heap = area_cover(s[:, 0], x_next, zeros, s[:, 1], np.ones(len(s)), xmax, ymax, width,
                          height)
    else:
        heap = np.zeros_like(used)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_size = np.where(used > 1e-9, log_sum / np.maximum(used, 1e-9), 0.0)
    used = np.clip(used, 0.0, 1.0)
    # Samples miss growth between two points: a block above the sampled heap is still heap.
    heap = np.clip(np.maximum(heap, used), 0.0, 1.0)
    return Cells(used, log_size, heap)
