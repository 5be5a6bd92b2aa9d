"""fitalloc bench harness: runs bench/workloads/* under several allocators.

compare.py (the command line) -> cli.py. One module per idea: workloads (what runs),
allocators (under what), build, runner (one run), schedule (the interleaved order), progress,
summary (medians and ratios), table (terminal), results (CSV/JSON), studies (the classic
studies' tables), plots, report (report.md). Python 3.11 standard library, plus matplotlib
for the plots (optional: without it the plots are skipped).
"""
