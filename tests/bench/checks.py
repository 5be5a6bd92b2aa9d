"""The checks of the bench's tests, imported by the Python they run (common.sh puts this folder
on PYTHONPATH): check() notes what is wrong and goes on, finish() prints it all and exits 1 if
anything was wrong, else 0."""
import sys

bad = []


def check(cond, msg):
    if not cond:
        bad.append(msg)


def finish():
    for b in bad:
        print("  " + b)
    sys.exit(1 if bad else 0)
