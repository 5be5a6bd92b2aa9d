"""One colour per allocator, the same in every plot of the report (time_rss, scaling, the Redis
study, the lab's plots): a reader who learns that fitalloc is blue finds it blue everywhere.

Names not in the table (another lab configuration, a new peer) get a colour chosen from the
name itself, so that they too keep it from one plot and one run to the next.
"""

from __future__ import annotations

import zlib

# WHY these: fitalloc's builds and modes in blues, so that they read together; the peers in the
# distinct hues of matplotlib's tab10; the lab's configurations in the other colours of tab20
# and tab20b. No two names share a colour (tests/bench/test_report.sh checks it).
COLOURS = {
    "fitalloc": "#1f77b4",
    "fitalloc-secure": "#08306b",
    "fitalloc-baseline": "#6baed6",
    "fitalloc-secure-baseline": "#4a6fa5",
    "fitalloc-mesh": "#17becf",
    "fitalloc-mesh-cpu10": "#76d7e3",
    "fitalloc-mesh-giveback": "#0b7285",
    "fitalloc-trace": "#9ecae1",
    "fitalloc-profile": "#2171b5",
    "fitalloc-profile-64k": "#4292c6",
    "fitalloc-profile-2m": "#c6dbef",
    "mimalloc": "#d62728",
    "jemalloc": "#2ca02c",
    "tcmalloc": "#ff7f0e",
    "scudo": "#9467bd",
    "glibc": "#7f7f7f",
    "mesh": "#e377c2",
    "lab-first": "#8c564b",
    "lab-next": "#c49c94",
    "lab-best": "#bcbd22",
    "lab-worst": "#dbdb8d",
    "lab-segregated": "#98df8a",
    "lab-first-list": "#843c39",
    "lab-best-list": "#637939",
    "lab-best-thread": "#7b4173",
    "lab-best-arenas": "#8c6d31",
    "lab-next64k-nomerge": "#c5b0d5",
    "lab-seg64k": "#5254a3",
    "lab-seg64k-nomerge": "#e7cb94",
}

# For names outside the table: colours none of the table's uses.
SPARE = ["#ad494a", "#a55194", "#ffbb78", "#f7b6d2", "#9c9ede", "#cedb9c"]


def colour(name: str) -> str:
    """The colour of allocator `name` (a matplotlib colour string)."""
    known = COLOURS.get(name)
    if known is not None:
        return known
    # crc32 rather than hash(): Python salts str hashes per process.
    return SPARE[zlib.crc32(name.encode()) % len(SPARE)]
