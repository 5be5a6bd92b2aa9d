"""matplotlib for map and compare, and only for them: imported on demand, with the Agg backend
(files, no display). When the Python running the command lacks it (a pyenv or venv python3
first on PATH, while Debian's python3-matplotlib is installed for /usr/bin/python3), the
command runs again, once, under FITALLOC_PYTHON or /usr/bin/python3."""

from __future__ import annotations

import os
import sys

from .errors import CommandError

# Set in the environment of the second run, so that it never starts a third.
_REEXEC_MARK = "FITALLOC_CLI_REEXEC"
SYSTEM_PYTHON = "/usr/bin/python3"


def _other_python() -> str | None:
    """A Python other than this one to try matplotlib with: FITALLOC_PYTHON, else the
    system's. Not probed first (that costs a start of Python): the second run, marked, reports
    the missing matplotlib itself if that Python lacks it too."""
    if os.environ.get(_REEXEC_MARK):
        return None
    here = os.path.realpath(sys.executable or "")
    for python in (os.environ.get("FITALLOC_PYTHON"), SYSTEM_PYTHON):
        if python and os.access(python, os.X_OK) and os.path.realpath(python) != here:
            return python
    return None


def _this_command() -> list[str]:
    """How to start this command again: its launcher, or (python3 -m fitalloc_cli) the package."""
    if os.path.basename(sys.argv[0]) != "__main__.py":
        return [sys.argv[0]]
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = package_parent + (os.pathsep + path if path else "")
    return ["-m", "fitalloc_cli"]


def pyplot():
    """matplotlib.pyplot, ready to draw into files; CommandError when it is not installed."""
    try:
        import matplotlib
        import numpy  # noqa: F401 (matplotlib's own dependency; the maps use it directly)
    except ImportError:
        python = _other_python()
        if python is not None:
            os.environ[_REEXEC_MARK] = "1"
            os.execv(python, [python] + _this_command() + sys.argv[1:])
        raise CommandError(f"matplotlib is not installed for {sys.executable}: install "
                           "python3-matplotlib (apt-get install python3-matplotlib) or "
                           "pip install matplotlib; map and compare need it") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
