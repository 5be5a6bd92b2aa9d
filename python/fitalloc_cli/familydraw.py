"""Drawing a family's structure (familymap.py) into its own image, beside the heap map of
`fitalloc map`: the buddy system's split tree, TLSF's lists, the slab allocator's pages."""

from __future__ import annotations

import numpy as np

from . import familymap as fm
from .units import human_bytes

USED, FREE, SPLIT = "tab:blue", "salmon", "0.85"


def _buddy(ax, m: fm.Moment) -> str:
    tree = fm.buddy_tree(m)
    for colour, rects in ((SPLIT, [(s, z, o) for s, z, o in tree.splits]),
                          (USED, [(s, z, o) for s, z, o, used in tree.blocks if used]),
                          (FREE, [(s, z, o) for s, z, o, used in tree.blocks if not used])):
        for order in sorted({o for _, _, o in rects}):
            spans = [(s, z) for s, z, o in rects if o == order]
            ax.broken_barh(spans, (order - 0.4, 0.8), facecolors=colour, edgecolors="white",
                           linewidth=0.2)
    from matplotlib.ticker import MaxNLocator

    from .mapdraw import bytes_axis

    ax.set_xlim(0, 1 << tree.top_order)
    bytes_axis(ax.xaxis, 1 << tree.top_order)  # in MiB (or KiB) as the heap maps' axes
    ax.set_xlabel("address in the heap")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # an order is a whole number
    ax.set_ylabel("order (block of 2^order bytes)")
    ax.plot([], [], "s", color=USED, label="used block")
    ax.plot([], [], "s", color=FREE, label="free block")
    ax.plot([], [], "s", color=SPLIT, label="split node")
    ax.legend(loc="upper right", fontsize=8)
    used = sum(1 for b in tree.blocks if b[3])
    return (f"the split tree: {used:,} used and {len(tree.blocks) - used:,} free blocks, "
            f"{len(tree.splits):,} split nodes")


def _tlsf(ax, m: fm.Moment, plt) -> str:
    lists = fm.tlsf_lists(m)
    levels = sorted({fl for fl, _ in lists}) or [0]
    grid = np.zeros((len(levels), fm.TLSF_SUBRANGES))
    for (fl, sl), n in lists.items():
        if sl < fm.TLSF_SUBRANGES:
            grid[levels.index(fl), sl] = n
    img = ax.imshow(np.ma.masked_equal(grid, 0), aspect="auto", cmap="viridis",
                    origin="lower", interpolation="nearest")
    ax.set_yticks(range(len(levels)),
                  ["< 256 B (16-byte lists)" if fl == 0 else f"2^{fl} ({human_bytes(1 << fl)})"
                   for fl in levels])
    ax.set_xlabel("second level: subrange of the first level's power of two")
    ax.set_ylabel("first level")
    plt.colorbar(img, ax=ax, label="free blocks in the list")
    return f"the lists: {sum(lists.values()):,} free blocks in {len(lists)} lists"


def _slab(ax, m: fm.Moment, plt) -> str:
    pages = fm.slab_pages(m)
    xs = np.arange(len(pages))
    classes = [p for p in pages if p.kind == "class"]
    norm = plt.Normalize(np.log2(48), np.log2(fm.SLAB_CLASS_MAX))
    colours = plt.cm.viridis(norm(np.log2([max(p.block, 1) for p in pages])))
    heights = [p.fill if p.kind == "class" else (1.0 if p.kind == "run" else 0.0) for p in pages]
    colours[[p.kind == "run" for p in pages]] = (0.6, 0.6, 0.6, 1.0)
    ax.bar(xs, heights, width=1.0, color=colours)
    free = [p.index for p in pages if p.kind == "free"]
    ax.bar(free, [0.02] * len(free), width=1.0, color=FREE)
    ax.set_xlim(-0.5, max(len(pages), 1) - 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(f"page ({human_bytes(fm.SLAB_PAGE)} each, from the heap's start)")
    ax.set_ylabel("fill: live bytes / page")
    sm = plt.cm.ScalarMappable(norm=norm, cmap="viridis")
    bar = plt.colorbar(sm, ax=ax, label="block size of the page's class")
    ticks = [6, 8, 10, 12, 13]
    bar.set_ticks(ticks, labels=[human_bytes(1 << t) for t in ticks])
    runs = sum(1 for p in pages if p.kind == "run")
    return (f"the pages: {len(classes):,} of size classes (mean fill "
            f"{np.mean([p.fill for p in classes]) if classes else 0:.0%}), {runs:,} in runs of "
            f"large blocks (grey), {len(free):,} free (salmon)")


def draw(hm, title: str, out: str, plt) -> str:
    """The structure of hm's family at its peak of live bytes into out; a one-line summary."""
    family = fm.family_of(hm.config)
    m = fm.peak_moment(hm)
    fig, ax = plt.subplots(figsize=(12, 5))
    if family == "buddy":
        what = _buddy(ax, m)
    elif family == "tlsf":
        what = _tlsf(ax, m, plt)
    else:
        what = _slab(ax, m, plt)
    ax.set_title(f"{title}\nat operation {m.op:,} (the peak of live bytes), heap "
                 f"{human_bytes(m.heap)}: {what}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return what
