"""The structure of a heap of the buddy system, TLSF or the slab allocator at one moment, from
fitalloc-replay's map files (mapdata.HeapMap): the blocks live at that operation tile the
heap with the free space between them, and each family arranges that space its own way:

  buddy  every block a power of two at a multiple of its size: the split tree, level by level
         (a node is used, free, or split into two halves);
  tlsf   free blocks merged at once, so each gap between live blocks is one free block, in the
         list of its size: first level its highest bit, second level one of 16 subranges
         (below 256 bytes, one list per 16 bytes);
  slab   64 KiB pages: each holds blocks of one size class, filled to some fraction, or is part
         of a run of pages for a large block, or free.

The moment is the sample where the live bytes peaked (the heap at its fullest use). A block of
blocks.csv is its payload (offset, usable size): the whole block is 16 bytes more, below it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mapdata import HeapMap

HEADER = 16
SLAB_PAGE = 64 * 1024
SLAB_CLASS_MAX = 8 * 1024
TLSF_SUBRANGES = 16
TLSF_SMALL = 256
FAMILIES = ("buddy", "tlsf", "slab")


def family_of(config: str) -> str | None:
    """The family of a configuration name (buddy, tlsf, slab, with -list or not), or None."""
    base = config.split("-")[0]
    return base if base in FAMILIES else None


@dataclass
class Moment:
    op: int  # the operation after which the heap is shown
    heap: int  # the heap's size then
    starts: np.ndarray  # int64: the live blocks' whole starts, ascending
    sizes: np.ndarray  # int64: their whole sizes


def peak_moment(hm: HeapMap) -> Moment:
    """The live blocks at the sample with the most live bytes (the last sample without any)."""
    s = hm.series
    if len(s):
        i = int(np.argmax(s[:, 2]))
        op, heap = int(s[i, 0]), int(s[i, 1])
    else:
        op, heap = hm.ops - 1, 0
    b = hm.blocks
    live = (b[:, 0] <= op) & ((b[:, 1] < 0) | (b[:, 1] > op)) if len(b) else np.zeros(0, bool)
    starts, sizes = b[live, 2] - HEADER, b[live, 3] + HEADER
    order = np.argsort(starts)
    starts, sizes = starts[order], sizes[order]
    if len(starts):
        heap = max(heap, int((starts + sizes).max()))
    return Moment(op, heap, starts, sizes)


def gaps(m: Moment) -> list[tuple[int, int]]:
    """(start, size) of the free space between the live blocks and up to the heap's end."""
    out, at = [], 0
    for start, size in zip(m.starts.tolist(), m.sizes.tolist()):
        if start > at:
            out.append((at, start - at))
        at = max(at, start + size)
    if m.heap > at:
        out.append((at, m.heap - at))
    return out


# ---- buddy: the split tree --------------------------------------------------------------

def _aligned_pieces(start: int, size: int) -> list[tuple[int, int]]:
    """A free gap as the buddy system holds it: the largest power-of-two blocks aligned to
    their size, merged as far as their buddies allow."""
    out = []
    while size > 0:
        k = (start & -start).bit_length() - 1 if start else size.bit_length() - 1
        k = min(k, size.bit_length() - 1)
        out.append((start, 1 << k))
        start, size = start + (1 << k), size - (1 << k)
    return out


@dataclass
class BuddyTree:
    blocks: list[tuple[int, int, int, bool]]  # (start, size, order, used)
    splits: list[tuple[int, int, int]]  # (start, size, order) of the nodes split in two
    top_order: int  # the order of the tree's root: the heap is at most 2^top_order


def buddy_tree(m: Moment) -> BuddyTree:
    blocks = [(s, z, z.bit_length() - 1, True)
              for s, z in zip(m.starts.tolist(), m.sizes.tolist())]
    for start, size in gaps(m):
        blocks += [(s, z, z.bit_length() - 1, False) for s, z in _aligned_pieces(start, size)]
    blocks.sort()
    top = max(1, m.heap - 1).bit_length()
    splits = set()
    for start, _, order, _ in blocks:
        for level in range(order + 1, top + 1):
            node = start & ~((1 << level) - 1)
            splits.add((node, 1 << level, level))
    return BuddyTree(blocks, sorted(splits), top)


# ---- TLSF: the lists --------------------------------------------------------------------

def tlsf_list(size: int) -> tuple[int, int]:
    """(first level, second level) of a free block of `size` bytes: below 256 bytes, first
    level 0 and one list per 16 bytes; above, the highest bit and one of 16 subranges."""
    if size < TLSF_SMALL:
        return 0, size // 16
    fl = size.bit_length() - 1
    return fl, (size >> (fl - 4)) & (TLSF_SUBRANGES - 1)


def tlsf_lists(m: Moment) -> dict[tuple[int, int], int]:
    """Free blocks per list."""
    out: dict[tuple[int, int], int] = {}
    for _, size in gaps(m):
        key = tlsf_list(size)
        out[key] = out.get(key, 0) + 1
    return out


# ---- slab: the pages --------------------------------------------------------------------

@dataclass
class SlabPage:
    index: int
    kind: str  # "class" (blocks of one size), "run" (part of a large block), "free"
    block: int  # the class's block size, or the large block's size; 0 when free
    fill: float  # bytes of live blocks / page size


def slab_pages(m: Moment) -> list[SlabPage]:
    pages = [SlabPage(i, "free", 0, 0.0) for i in range(-(-m.heap // SLAB_PAGE))]
    for start, size in zip(m.starts.tolist(), m.sizes.tolist()):
        first = start // SLAB_PAGE
        if size > SLAB_CLASS_MAX:
            for i in range(first, min(len(pages), -(-(start + size) // SLAB_PAGE))):
                pages[i] = SlabPage(i, "run", size, 1.0)
        elif first < len(pages):
            p = pages[first]
            p.kind, p.block = "class", max(p.block, size)
            p.fill += size / SLAB_PAGE
    return pages
