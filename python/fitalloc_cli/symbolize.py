"""Names for a heap profile's addresses, from its maps section and binutils' addr2line.

addr2line (binutils) rather than google-pprof (docs/profile.md says why): one run per mapped
file resolves every address of the profile, inlined functions included, with file and line,
and needs no package beyond binutils. An address is found in its mapping, turned into a file
offset, then into the ELF file's own address through its loadable segments (the same file
offset maps to different addresses in a PIE, a shared library and an old-style executable)."""

from __future__ import annotations

import bisect
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass

from .errors import CommandError
from .heapprofile import HeapProfile, Mapping

_PT_LOAD = 1


@dataclass(frozen=True)
class Frame:
    function: str
    location: str  # "file.c:12" (the file's name alone), or "" when nothing says

    def label(self) -> str:
        return f"{self.function} {self.location}" if self.location else self.function


def _load_segments(path: str) -> list[tuple[int, int, int]] | None:
    """(file offset, size in the file, address) of each PT_LOAD of a 64- or 32-bit
    little-endian ELF file; None when it is not one."""
    try:
        with open(path, "rb") as f:
            ident = f.read(64)
            if len(ident) < 52 or ident[:4] != b"\x7fELF" or ident[5] != 1:
                return None
            wide = ident[4] == 2
            if wide:
                phoff, = struct.unpack_from("<Q", ident, 32)
                phentsize, phnum = struct.unpack_from("<HH", ident, 54)
            else:
                phoff, = struct.unpack_from("<I", ident, 28)
                phentsize, phnum = struct.unpack_from("<HH", ident, 42)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return None
    segments = []
    for i in range(phnum):
        entry = table[i * phentsize:(i + 1) * phentsize]
        if wide and len(entry) >= 56:
            kind, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", entry)
        elif not wide and len(entry) >= 32:
            kind, offset, vaddr, _, filesz = struct.unpack_from("<IIIII", entry)
        else:
            return None
        if kind == _PT_LOAD:
            segments.append((offset, filesz, vaddr))
    return segments


def _addr2line(path: str, addresses: list[int]) -> dict[int, list[Frame]]:
    """addr2line's frames for each address of `path`, innermost (inlined) first."""
    tool = shutil.which("addr2line")
    if tool is None:
        raise CommandError("addr2line not found: install binutils (apt-get install binutils)")
    query = "".join(f"{a:#x}\n" for a in addresses)
    try:
        out = subprocess.run([tool, "-a", "-f", "-C", "-i", "-e", path], input=query,
                             capture_output=True, text=True, check=False).stdout
    except OSError:
        return {}
    found: dict[int, list[Frame]] = {}
    current: list[Frame] | None = None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        # -a prints each address alone on a line before its frames.
        if line.startswith("0x") and " " not in line:
            current = found.setdefault(int(line, 16), [])
            i += 1
            continue
        location = lines[i + 1] if i + 1 < len(lines) else ""
        location = os.path.basename(location.split(" (discriminator")[0])
        if location.startswith("??"):
            location = ""
        if current is not None and line != "??":
            current.append(Frame(line, location))
        i += 2
    return found


class Symbolizer:
    """Resolves the addresses of one profile; a name is computed once per address."""

    def __init__(self, profile: HeapProfile):
        self._maps = sorted((m for m in profile.mappings if "x" in m.perms),
                            key=lambda m: m.start)
        self._starts = [m.start for m in self._maps]
        self._frames: dict[int, list[Frame]] = {}
        self._resolve({a for s in profile.stacks for a in s.addresses})

    def _mapping(self, address: int) -> Mapping | None:
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0 and address < self._maps[i].end:
            return self._maps[i]
        return None

    def _resolve(self, addresses: set[int]) -> None:
        wanted: dict[str, dict[int, int]] = {}  # file -> its own address -> profile address
        for address in addresses:
            # A return address is one past its call: the call itself is at the byte before.
            mapping = self._mapping(address - 1)
            if mapping is None:
                self._frames[address] = [Frame(f"{address:#x}", "")]
                continue
            offset = address - 1 - mapping.start + mapping.offset
            name = os.path.basename(mapping.path) or "?"
            self._frames[address] = [Frame(f"{name}+{offset:#x}", "")]
            if mapping.path.startswith("/"):
                wanted.setdefault(mapping.path, {})[offset] = address
        for path, by_offset in wanted.items():
            segments = _load_segments(path)
            if segments is None:
                continue
            own = {}
            for offset, address in by_offset.items():
                for seg_offset, size, vaddr in segments:
                    if seg_offset <= offset < seg_offset + size:
                        own[offset - seg_offset + vaddr] = address
                        break
            for vaddr, frames in _addr2line(path, sorted(own)).items():
                if frames and vaddr in own:
                    self._frames[own[vaddr]] = frames

    def file_of(self, address: int) -> str:
        mapping = self._mapping(address - 1)
        return mapping.path if mapping else ""

    def stack(self, addresses: list[int]) -> list[Frame]:
        """The stack's frames, innermost first, inlined ones included."""
        return [frame for a in addresses for frame in self._frames[a]]
