"""Where things are."""

import os

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT_DIR = os.path.dirname(BENCH_DIR)
WORKLOAD_DIR = os.path.join(BENCH_DIR, "workloads")
WORKLOAD_LIB_DIR = os.path.join(WORKLOAD_DIR, "lib")
SUPPORT_DIR = os.path.join(BENCH_DIR, "support")
DEFAULT_BUILD_DIR = os.path.join(BENCH_DIR, "build")
DEFAULT_FITALLOC = os.path.join(ROOT_DIR, "build", "libfitalloc.so")
STUDIES_JSON = os.path.join(BENCH_DIR, "studies.json")
