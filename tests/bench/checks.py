"""The checks of the bench's tests, imported by the Python they run (common.sh puts this folder
on PYTHONPATH): check() notes what is wrong and goes on, finish() prints it all and exits 1 if
anything was wrong, else 0; table_rows() reads report.md's table rows; ok_runs() walks a study's
rows."""
import sys

bad = []


def check(cond, msg):
    if not cond:
        bad.append(msg)


def finish():
    for b in bad:
        print("  " + b)
    sys.exit(1 if bad else 0)


def table_rows(text):
    """First cell -> the other cells, for every table row of a report's markdown text."""
    return {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in text.splitlines() if line.startswith("| ")}


def ok_runs(doc):
    """(name, first run) of each row of a study's JSON whose status is ok; any other row is
    noted as wrong."""
    for row in doc["rows"]:
        check(row["status"] == "ok", f"{row['name']}: {row['status']} {row['note']}")
        if row["status"] == "ok":
            yield row["name"], row["runs"][0]
