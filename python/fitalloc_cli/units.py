"""Numbers for people: byte sizes in KiB/MiB/GiB, counts with thousands separators."""

from __future__ import annotations

_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"]


def human_bytes(n: float | int | None) -> str:
    """1536 -> "1.5 KiB"; below 1 KiB the exact count ("48 B"); None -> "-"."""
    if n is None:
        return "-"
    value = float(n)
    unit = 0
    while abs(value) >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{int(n)} B"
    return f"{value:.1f} {_UNITS[unit]}"


def count(n: int | None) -> str:
    """12345 -> "12,345"; None -> "-"."""
    return "-" if n is None else f"{n:,}"


def parse_size(text: str) -> int:
    """Bytes with an optional K, M or G suffix (powers of 1024; KB, Ki and KiB also read), as the
    library reads its size options (src/common/options.c). ValueError when it does not parse."""
    s = text
    digits = len(s) - len(s.lstrip("0123456789"))
    if digits == 0:
        raise ValueError(f"'{text}' is not a size (bytes, with an optional K, M or G suffix)")
    value = int(s[:digits])
    suffix = s[digits:].lower()
    shifts = {"": 0, "k": 10, "m": 20, "g": 30}
    base, rest = suffix[:1], suffix[1:]
    if base not in shifts or rest not in ("", "b", "i", "ib"):
        raise ValueError(f"'{text}' is not a size (bytes, with an optional K, M or G suffix)")
    return value << shifts[base]
