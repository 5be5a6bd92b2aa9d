"""Finding libfitalloc.so and fitalloc-replay.

Order: the environment (FITALLOC_LIB, FITALLOC_REPLAY), then the paths the launcher was
generated with (in a build tree: the library and fitalloc-replay that CMake builds there;
installed: <prefix>/<libdir>/libfitalloc.so.0 and fitalloc-replay beside the command in
<prefix>/bin), then, for fitalloc-replay only, PATH. libfitalloc-secure.so (secure mode's
library) is FITALLOC_SECURE_LIB, else the file beside libfitalloc.so of the same name with
"-secure" added."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

from .errors import CommandError

LIBRARY_ENV = "FITALLOC_LIB"
SECURE_LIBRARY_ENV = "FITALLOC_SECURE_LIB"
REPLAY_ENV = "FITALLOC_REPLAY"


@dataclass
class Places:
    """Where the launcher says the library and fitalloc-replay should be, best first."""

    library: list[str] = field(default_factory=list)
    replay: list[str] = field(default_factory=list)


def _from_env(name: str, what: str, need_exec: bool) -> str | None:
    value = os.environ.get(name)
    if not value:
        return None
    if not os.path.isfile(value):
        raise CommandError(f"{name}={value}: no such file (it should name {what})")
    if need_exec and not os.access(value, os.X_OK):
        raise CommandError(f"{name}={value}: not executable")
    return os.path.abspath(value)


def library(places: Places) -> str:
    """The absolute path of libfitalloc.so to preload, or CommandError saying where we looked."""
    found = _from_env(LIBRARY_ENV, "libfitalloc.so", need_exec=False)
    if found is None:
        found = next((os.path.abspath(p) for p in places.library if os.path.isfile(p)), None)
    if found is None:
        looked = ", ".join(places.library) or "nowhere (no launcher paths)"
        raise CommandError(f"cannot find libfitalloc.so (looked at {looked}); "
                           f"set {LIBRARY_ENV}=/path/to/libfitalloc.so")
    return _preloadable(found, LIBRARY_ENV)


def secure_library(places: Places) -> str:
    """The absolute path of libfitalloc-secure.so to preload, or CommandError."""
    found = _from_env(SECURE_LIBRARY_ENV, "libfitalloc-secure.so", need_exec=False)
    if found is None:
        folder, name = os.path.split(library(places))
        secure = name.replace("libfitalloc", "libfitalloc-secure", 1)
        found = os.path.join(folder, secure)
        if secure == name or not os.path.isfile(found):
            raise CommandError(f"cannot find libfitalloc-secure.so (looked at {found}); "
                               f"set {SECURE_LIBRARY_ENV}=/path/to/libfitalloc-secure.so")
    return _preloadable(found, SECURE_LIBRARY_ENV)


def _preloadable(found: str, env: str) -> str:
    # ld.so splits LD_PRELOAD at spaces and colons: such a path cannot be preloaded.
    if any(c in found for c in " :\t\n"):
        raise CommandError(f"{found}: LD_PRELOAD cannot hold a path with a space or a colon; "
                           f"copy or link the library elsewhere and set {env}")
    return found


def replay(places: Places) -> str:
    """The path of fitalloc-replay to run, or CommandError saying where we looked."""
    found = _from_env(REPLAY_ENV, "the fitalloc-replay program", need_exec=True)
    if found is None:
        found = next((p for p in places.replay
                      if os.path.isfile(p) and os.access(p, os.X_OK)), None)
    if found is None:
        found = shutil.which("fitalloc-replay")
    if found is None:
        looked = ", ".join(places.replay + ["PATH"])
        raise CommandError(f"cannot find fitalloc-replay (looked at {looked}); build it "
                           f"(ninja fitalloc-replay) or set {REPLAY_ENV}=/path/to/fitalloc-replay")
    return found

