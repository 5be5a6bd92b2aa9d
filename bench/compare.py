#!/usr/bin/env python3
"""Compare fitalloc with other malloc implementations on the bench workloads.

Builds bench/workloads/*.c and bench/support/*.c, then runs every (workload, allocator) pair
R times, interleaved (allocator order rotated per repetition), each run one process under
LD_PRELOAD=<allocator>, and prints medians (min-max) and ratios to mimalloc. With --results DIR
it also writes the raw runs (CSV, JSON), report.md and plots. The code is in bench/harness/;
tools/bench.sh is the one-command front end. See docs/bench.md.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
