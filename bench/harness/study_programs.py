"""The programs of the replay study (replay_study.py): real programs Debian ships, each run on
an input the study generates, sized by a scale factor (1: the default bench's size).

Each input is written into the program's work folder and kept with the results, so that a
run can be repeated by hand; the inputs depend only on the scale (fixed seeds), so every
bench traces the same operations, bar what the programs do differently from run to run.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Invocation:
    """How to run a program once its input is written, in its work folder (the files are
    named relative to it, so that the command line reads as one would type it)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None  # a file in the work folder
    inputs: list[str] = field(default_factory=list)  # files of the work folder to keep


@dataclass(frozen=True)
class Program:
    name: str  # also the results folder: replay/<name>/
    executable: str  # a name looked up on PATH, or an absolute path
    package: str  # the Debian package that provides it, for the note when it is missing
    what: str  # one line for the report
    prepare: Callable[[str, float], Invocation]  # (work folder, scale) -> how to run it
    # WHY: a program that starts others (gcc: cc1, as) leaves one trace per process; the
    # study replays the one with the most operations, the process that does the work.
    several_processes: bool = False


def _scaled(base: int, scale: float) -> int:
    return max(1, round(base * scale))


# ---- python3: builds and drops structures ----------------------------------------------

# Rounds of a dict of lists of strings of 1..300 bytes, sorted and printed in part; a sixteenth
# of each round is kept in a pool of at most 8 rounds, a random one of which is dropped: blocks
# of many sizes and lifetimes, so that the policies leave different holes.
PYTHON_SCRIPT = '''\
"""The replay study's python3 program: builds and drops structures (bench/harness)."""
import random
import sys

rounds = int(sys.argv[1])
rng = random.Random(1)
kept = []
for r in range(rounds):
    batch = {}
    for i in range(2500):
        words = ["v" * rng.randrange(1, 300) for _ in range(rng.randrange(1, 6))]
        batch["k%d-%d" % (r, i)] = words
    text = repr(sorted(batch.items())[:200])
    kept.append({k: v for k, v in batch.items() if len(v[0]) % 16 == 0})
    if len(kept) > 8:
        del kept[rng.randrange(len(kept))]
    del batch, text
print("kept", sum(len(d) for d in kept))
'''


def _prepare_python(work: str, scale: float) -> Invocation:
    script = "structures.py"
    with open(os.path.join(work, script), "w") as f:
        f.write(PYTHON_SCRIPT)
    # PYTHONMALLOC=malloc: every object goes to malloc, not to Python's own small-object
    # arenas, so the trace is the program's whole heap. -s rather than -I (no user site):
    # -I would ignore PYTHONMALLOC too. The study's environment has no other PYTHON*.
    return Invocation(["/usr/bin/python3", "-s", script, str(_scaled(8, scale))],
                      {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"}, inputs=[script])


# ---- sqlite3: a database built, indexed and queried ---------------------------------------

def sqlite_script(rows: int) -> str:
    """Create a table, insert `rows` rows one statement each in a transaction, index it,
    query, update, delete, aggregate into a second table, vacuum."""
    rng = random.Random(1)
    # WHY the small page cache (512 KiB, SQLite's default is 2 MiB): the database outgrows it,
    # so pages are evicted and read again while the statements, sorters and strings of the
    # queries come and go around them, instead of a cache that only grows.
    out = ["PRAGMA cache_size = -512;",
           "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, kind INTEGER, price REAL, "
           "note TEXT);", "BEGIN;"]
    for i in range(rows):
        out.append(f"INSERT INTO item(name, kind, price, note) VALUES ('item{i}', "
                   f"{rng.randrange(40)}, {rng.uniform(1, 500):.2f}, "
                   f"'{'x' * rng.randrange(1, 200)}');")
    out += ["COMMIT;",
            "CREATE INDEX item_kind ON item(kind, price);",
            "CREATE INDEX item_name ON item(name);",
            "SELECT kind, count(*), avg(price), max(length(note)) FROM item GROUP BY kind "
            "ORDER BY 3 DESC LIMIT 5;",
            "SELECT name FROM item WHERE kind = 7 AND price > 250 ORDER BY price LIMIT 3;",
            "UPDATE item SET note = note || note WHERE kind % 3 = 0;",
            "DELETE FROM item WHERE kind % 5 = 0;",
            "SELECT count(*), sum(length(note)) FROM item;",
            "SELECT a.kind, count(*) FROM item a JOIN item b ON a.kind = b.kind AND a.id < b.id "
            "WHERE a.price < 20 GROUP BY a.kind ORDER BY a.kind LIMIT 3;",
            "SELECT substr(note, 1, 3) || kind, count(*), length(group_concat(name)) FROM item "
            "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 2;",
            "SELECT name, price * kind AS v FROM item ORDER BY v DESC, name LIMIT 5;",
            "CREATE TABLE summary AS SELECT kind, group_concat(note, ',') AS notes FROM item "
            "GROUP BY kind;",
            "SELECT kind, length(notes) FROM summary ORDER BY 2 DESC, 1 LIMIT 3;",
            "VACUUM;"]
    return "\n".join(out) + "\n"


def _prepare_sqlite(work: str, scale: float) -> Invocation:
    sql, db = "build.sql", "study.db"
    with open(os.path.join(work, sql), "w") as f:
        f.write(sqlite_script(_scaled(16000, scale)))
    for stale in (db, db + "-journal"):
        if os.path.exists(os.path.join(work, stale)):
            os.remove(os.path.join(work, stale))
    return Invocation(["sqlite3", "-batch", db], stdin=sql, inputs=[sql])


# ---- gcc -c: a generated C file ------------------------------------------------------------

def c_source(functions: int) -> str:
    """`functions` structs, each with a recursive function over it (a loop and a switch) and
    an exported caller: enough for cc1's parser, optimiser and code generator to work."""
    out = ["#include <stdlib.h>", "#include <string.h>", ""]
    for i in range(functions):
        n = i % 7 + 1
        out += [f"struct s{i} {{ int a; long b[{n}]; char name[{8 + i % 24}]; "
                f"struct s{i} *next; }};",
                f"static long f{i}(struct s{i} *p, int n) {{",
                "    long acc = 0;",
                "    for (int k = 0; k < n; k++) {",
                f"        switch ((k + {i}) % 5) {{",
                "        case 0: acc += p->a * k; break;",
                f"        case 1: acc ^= p->b[k % {n}]; break;",
                "        case 2: acc += (long)strlen(p->name); break;",
                f"        case 3: if (p->next) acc += f{i}(p->next, n / 2); break;",
                "        default: acc -= k;",
                "        }",
                "    }",
                "    return acc;",
                "}",
                f"long g{i}(int n) {{ struct s{i} *p = calloc(1, sizeof *p); "
                f"long r = p ? f{i}(p, n) : 0; free(p); return r; }}",
                ""]
    return "\n".join(out)


def _prepare_gcc(work: str, scale: float) -> Invocation:
    src = "generated.c"
    with open(os.path.join(work, src), "w") as f:
        f.write(c_source(_scaled(50, scale)))
    return Invocation(["gcc", "-O2", "-c", src, "-o", "generated.o"], inputs=[src])


PROGRAMS = [
    Program("python3", "/usr/bin/python3", "python3",
            "The system Python (PYTHONMALLOC=malloc) on a script that builds and drops "
            "dicts of lists of strings", _prepare_python),
    Program("sqlite3", "sqlite3", "sqlite3",
            "The SQLite shell building a database: create, insert rows one statement each, "
            "index, query, update, delete", _prepare_sqlite),
    Program("gcc", "gcc", "gcc",
            "gcc -O2 -c on a generated C file (the trace of cc1, the compiler proper)",
            _prepare_gcc, several_processes=True),
]
NAMES = [p.name for p in PROGRAMS]


def select(text: str | None) -> list[Program]:
    """The programs of a comma list ("all" or None: every one); ValueError on a bad name."""
    if text is None or text == "all":
        return list(PROGRAMS)
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in NAMES]
    if bad or not names:
        raise ValueError(f"unknown study program '{','.join(bad) or text}'; valid: "
                         f"{', '.join(NAMES)}, all")
    return [p for p in PROGRAMS if p.name in names]
