"""A flame graph of a heap profile's live bytes, drawn with matplotlib (docs/profile.md says why
this library): each frame a box as wide as the bytes live under it, its callers below it; a
box's children sorted by bytes, the largest first. In SVG the names stay text, so that a
browser's search finds them, and each box has its full name and bytes as a tooltip."""

from __future__ import annotations

import html
import zlib

from .plotting import pyplot
from .units import human_bytes


class _Node:
    __slots__ = ("name", "bytes", "children")

    def __init__(self, name: str):
        self.name = name
        self.bytes = 0
        self.children: dict[str, _Node] = {}


def tree(stacks: list[tuple[list[str], int]]) -> _Node:
    """The call tree of (frames outermost first, live bytes) pairs, under a root "all"."""
    root = _Node("all")
    for frames, nbytes in stacks:
        if nbytes <= 0:
            continue
        root.bytes += nbytes
        node = root
        for name in frames:
            node = node.children.setdefault(name, _Node(name))
            node.bytes += nbytes
    return root


def _colour(name: str) -> tuple[float, float, float]:
    """A warm colour fixed by the name, so a function keeps its colour from one graph to the
    next."""
    h = zlib.crc32(name.encode())
    return (0.86 + (h & 0xff) / 255 * 0.14, 0.35 + (h >> 8 & 0xff) / 255 * 0.45,
            0.05 + (h >> 16 & 0xff) / 255 * 0.2)


def _depth(node: _Node) -> int:
    return 1 + max((_depth(c) for c in node.children.values()), default=0)


def draw(stacks: list[tuple[list[str], int]], title: str, path: str) -> None:
    """Writes the flame graph to `path` (.svg or .png, by its suffix)."""
    plt = pyplot()
    root = tree(stacks)
    depth = _depth(root)
    width_in = 14.0
    fig, ax = plt.subplots(figsize=(width_in, 1.0 + 0.22 * depth))
    total = max(root.bytes, 1)
    chars_per_unit = width_in * 72 / 6.0  # 8-point text is about 6 points a character

    tooltips: dict[str, str] = {}

    def box(node: _Node, x: float, level: int) -> None:
        w = node.bytes / total
        rect = plt.Rectangle((x, level), w, 0.95, facecolor=_colour(node.name),
                             edgecolor="white", linewidth=0.3)
        rect.set_gid(f"frame{len(tooltips)}")
        tooltips[rect.get_gid()] = (f"{node.name}: {human_bytes(node.bytes)}, "
                                    f"{100 * node.bytes / total:.1f}%")
        ax.add_patch(rect)
        room = int(w * chars_per_unit) - 1
        text = f"{node.name} ({human_bytes(node.bytes)})"
        if len(text) > room:
            text = node.name if len(node.name) <= room else node.name[:room - 2] + ".."
        if room >= 3:
            ax.text(x + 0.003, level + 0.45, text, fontsize=8, va="center", ha="left",
                    clip_on=True)
        for child in sorted(node.children.values(), key=lambda c: (-c.bytes, c.name)):
            box(child, x, level + 1)
            x += child.bytes / total

    box(root, 0.0, 0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, depth)
    ax.axis("off")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    plt.rcParams["svg.fonttype"] = "none"
    fig.savefig(path)
    plt.close(fig)
    if path.endswith(".svg"):
        _add_tooltips(path, tooltips)


def _add_tooltips(path: str, tooltips: dict[str, str]) -> None:
    """A <title> in each box's group (matplotlib writes <g id="GID"> for an artist's gid),
    which browsers show on hover."""
    with open(path, encoding="utf-8") as f:
        svg = f.read()
    for gid, text in tooltips.items():
        svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{html.escape(text)}</title>', 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(svg)
