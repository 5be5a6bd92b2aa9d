"""The programs of the replay study (replay_study.py): real programs Debian ships, each run on
an input the study generates, sized by a scale factor (1: the default bench's size).

Each input is written into the program's work folder and kept with the results, so that a
run can be repeated by hand; the inputs depend only on the scale (fixed seeds), so every
bench traces the same operations, bar what the programs do differently from run to run.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
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
    # A server's load: a command run, untraced, while the traced program runs; it must make
    # the program exit (redis-cli shutdown) when it is done.
    load: list[str] | None = None


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
    # Heap maps drawn (fitalloc compare): for a few programs only (replay_study.MAP_PROGRAMS).
    maps_by_default: bool = False
    # Other programs it needs on PATH (a server's load), each with its Debian package.
    helpers: tuple[tuple[str, str], ...] = ()


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


# ---- g++ -c: a generated C++ file -----------------------------------------------------------

def cpp_source(classes: int) -> str:
    """`classes` structs holding a map of strings to vectors and a vector of unique_ptrs, each
    with a function that fills, sorts (a lambda) and scores it: work for cc1plus's template
    instantiation, overload resolution and inlining."""
    out = ["#include <algorithm>", "#include <map>", "#include <memory>", "#include <string>",
           "#include <vector>", ""]
    for i in range(classes):
        out += [f"struct Item{i} {{",
                "    std::map<std::string, std::vector<int>> table;",
                "    std::vector<std::unique_ptr<std::string>> names;",
                f"    void add(const std::string &k, int v) {{ table[k + \"{i}\"].push_back(v * "
                f"{i % 13 + 1}); names.push_back(std::make_unique<std::string>(k)); }}",
                "    long score() const {",
                "        long s = 0;",
                "        for (const auto &[k, v] : table)",
                "            s += static_cast<long>(k.size()) + std::count_if(v.begin(), v.end(), "
                f"[](int x) {{ return x % {i % 5 + 2} == 0; }});",
                "        return s;",
                "    }",
                "};",
                f"long run{i}(int n) {{",
                f"    Item{i} item;",
                f"    for (int j = 0; j < n; j++) item.add(std::to_string(j % {i % 17 + 3}), j);",
                "    std::vector<long> v(n);",
                "    std::sort(v.begin(), v.end(), [](long a, long b) { return a > b; });",
                "    return item.score() + (v.empty() ? 0 : v.front());",
                "}", ""]
    return "\n".join(out)


def _prepare_gxx(work: str, scale: float) -> Invocation:
    src = "generated.cc"
    with open(os.path.join(work, src), "w") as f:
        f.write(cpp_source(_scaled(3, scale)))
    return Invocation(["g++", "-std=c++17", "-O1", "-c", src, "-o", "generated.o"],
                      inputs=[src])


# ---- perl: hashes of arrays of strings -----------------------------------------------------

# The python3 program's shape in Perl (whose Debian build uses the C library's malloc): rounds
# of a hash of arrays of strings, a part of each kept in a pool of at most 8 rounds.
PERL_SCRIPT = r'''# The replay study's perl program: builds and drops hashes (bench/harness).
use strict;
use warnings;
my $rounds = shift;
srand(1);
my @kept;
for my $r (1 .. $rounds) {
    my %h;
    for my $i (1 .. 3000) {
        $h{"k$r-$i"} = [map { "v" x (1 + int(rand(300))) } 1 .. (1 + int(rand(5)))];
    }
    my $text = join(",", map { "$_=" . scalar(@{$h{$_}}) } (sort keys %h)[0 .. 199]);
    my %keep = map { $_ => $h{$_} } grep { length($h{$_}[0]) % 16 == 0 } keys %h;
    push @kept, \%keep;
    splice(@kept, int(rand(@kept)), 1) if @kept > 8;
}
my $n = 0;
$n += scalar(keys %$_) for @kept;
print "kept $n\n";
'''


def _prepare_perl(work: str, scale: float) -> Invocation:
    script = "hashes.pl"
    with open(os.path.join(work, script), "w") as f:
        f.write(PERL_SCRIPT)
    return Invocation(["perl", script, str(_scaled(16, scale))], {"PERL_HASH_SEED": "0"},
                      inputs=[script])


# ---- git fast-import: a history of commits -------------------------------------------------

def fast_import_stream(commits: int) -> str:
    """A history of `commits` commits on 40 files of generated lines, each commit changing a
    few lines of 3 files: git fast-import stores blobs and trees and deltifies them."""
    rng = random.Random(1)
    files = {f"src/f{i}.txt": [f"line {j} of file {i}" for j in range(rng.randrange(20, 400))]
             for i in range(40)}
    out = []
    for c in range(commits):
        out += ["commit refs/heads/main", f"mark :{c + 1}",
                f"committer Study <study@example.org> {1700000000 + c * 60} +0000"]
        msg = f"commit {c}"
        out += [f"data {len(msg)}", msg]
        if c:
            out.append(f"from :{c}")
        for name in rng.sample(sorted(files), 3):
            lines = files[name]
            for _ in range(rng.randrange(1, 8)):
                lines.insert(rng.randrange(len(lines) + 1),
                             "x" * rng.randrange(1, 120) + f" {c}")
            data = "\n".join(lines) + "\n"
            out += [f"M 100644 inline {name}", f"data {len(data.encode())}", data]
        out.append("")
    return "\n".join(out) + "\n"


def _prepare_git(work: str, scale: float) -> Invocation:
    stream, repo = "history.fi", "repo.git"
    with open(os.path.join(work, stream), "w") as f:
        f.write(fast_import_stream(_scaled(150, scale)))
    if not os.path.isdir(os.path.join(work, repo)):  # if this fails, so does fast-import
        subprocess.run(["git", "init", "-q", "--bare", repo], cwd=work,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return Invocation(["git", "-C", repo, "fast-import", "--quiet", "--force"],
                      {"GIT_CONFIG_NOSYSTEM": "1", "HOME": work}, stdin=stream, inputs=[stream])


# ---- sort: a file larger than its buffer (the timed study's) -----------------------------------------------------

def _prepare_sort(work: str, scale: float) -> Invocation:
    """Lines of random words and numbers, sorted by the second field with a buffer smaller than
    the file: runs sorted in memory, written to temporary files and merged."""
    src = "lines.txt"
    rng = random.Random(1)
    with open(os.path.join(work, src), "w") as f:
        for i in range(_scaled(60000, scale)):
            f.write(f"{'w' * rng.randrange(1, 40)}{i} {rng.randrange(10 ** 6)} "
                    f"{'z' * rng.randrange(0, 80)}\n")
    return Invocation(["sort", "-S", "1M", "--parallel=1", "-T", ".", "-k2,2n", src, "-o",
                       "sorted.txt"], inputs=[src])


# ---- gawk: an associative array of words ---------------------------------------------------

def _words_file(work: str, name: str, lines: int, seed: int) -> None:
    rng = random.Random(seed)
    with open(os.path.join(work, name), "w") as f:
        for i in range(lines):
            f.write(" ".join(f"w{rng.randrange(50000)}" for _ in range(rng.randrange(2, 14)))
                    + "\n")


AWK_SCRIPT = ('{ for (i = 1; i <= NF; i++) { n[$i]++; last[$i] = $0 } } '
              'END { for (w in n) if (n[w] > 40) print w, n[w], length(last[w]) }')


def _prepare_awk(work: str, scale: float, awk: str = "gawk") -> Invocation:
    """awk counting words in an associative array and keeping each word's last line: tens of
    thousands of strings that live until the end, and a line replaced at every word. GNU awk
    allocates each of them with malloc (mawk, Debian's default awk, from pools of its own)."""
    _words_file(work, "words.txt", _scaled(25000, scale), 4)
    return Invocation([awk, AWK_SCRIPT, "words.txt"], inputs=["words.txt"])


# ---- jq: a JSON document grouped and summed -------------------------------------------------

def _prepare_jq(work: str, scale: float) -> Invocation:
    """jq grouping and summing a JSON array of generated records: the parsed document, then the
    groups' arrays built from it, and the output."""
    rng = random.Random(7)
    records = [{"id": i, "kind": f"k{rng.randrange(300)}", "price": rng.randrange(10 ** 5),
                "tags": [f"t{rng.randrange(100)}" for _ in range(rng.randrange(1, 6))]}
               for i in range(_scaled(5000, scale))]
    with open(os.path.join(work, "records.json"), "w") as f:
        json.dump(records, f)
    return Invocation(["jq", "-c", "group_by(.kind) | map({kind: .[0].kind, n: length, "
                       "sum: (map(.price) | add), tags: (map(.tags[]) | unique | length)})",
                       "records.json"], inputs=["records.json"])


# ---- redis-server under redis-benchmark ---------------------------------------------------

def _prepare_redis(work: str, scale: float) -> Invocation:
    """The server on a unix socket, fed by redis-benchmark (untraced): strings, lists, sets,
    hashes and sorted sets over 5,000 random keys, in four rounds whose values are 200, 3000,
    16 and again 200 bytes (each round replaces the values of the one before: the heap grows,
    shrinks and is filled again), then shut down. The server is traced; the load script waits
    for it, runs the benchmark and stops it."""
    requests = _scaled(2500, scale)
    sock = "redis.sock"  # in the work folder, where the server and its load run
    load = f"""set -e
for i in $(seq 100); do redis-cli -s {sock} ping >/dev/null 2>&1 && break; sleep 0.1; done
for d in 200 3000 16 200; do
    redis-benchmark -s {sock} -q -n {requests} -r 5000 -d $d -P 8 \\
        -t set,get,lpush,lpop,sadd,hset,spop,zadd,incr >/dev/null
done
redis-cli -s {sock} shutdown nosave >/dev/null || true
"""
    with open(os.path.join(work, "load.sh"), "w") as f:
        f.write(load)
    return Invocation(["redis-server", "--port", "0", "--unixsocket", sock, "--save", "",
                       "--appendonly", "no", "--dir", "."], load=["bash", "load.sh"],
                      inputs=["load.sh"])


PROGRAMS = [
    Program("python3", "/usr/bin/python3", "python3",
            "The system Python (PYTHONMALLOC=malloc) on a script that builds and drops "
            "dicts of lists of strings", _prepare_python, maps_by_default=True),
    Program("sqlite3", "sqlite3", "sqlite3",
            "The SQLite shell building a database: create, insert rows one statement each, "
            "index, query, update, delete", _prepare_sqlite, maps_by_default=True),
    Program("gcc", "gcc", "gcc",
            "gcc -O2 -c on a generated C file (the trace of cc1, the compiler proper)",
            _prepare_gcc, several_processes=True, maps_by_default=True),
    Program("g++", "g++", "g++",
            "g++ -O1 -c on a generated C++ file of maps, vectors, unique_ptrs and lambdas (the "
            "trace of cc1plus)", _prepare_gxx, several_processes=True),
    Program("perl", "perl", "perl-base",
            "Perl on a script that builds and drops hashes of arrays of strings", _prepare_perl),
    Program("git", "git", "git",
            "git fast-import of a generated history (blobs, trees, deltas) into a bare repository",
            _prepare_git),
    Program("gawk", "gawk", "gawk",
            "GNU awk counting the words of generated lines in an associative array, keeping "
            "each word's last line", _prepare_awk),
    Program("jq", "jq", "jq",
            "jq grouping and summing a generated JSON array of records", _prepare_jq),
    Program("redis", "redis-server", "redis-server",
            "redis-server on a unix socket under redis-benchmark (strings, lists, sets, hashes, "
            "sorted sets over 5,000 keys; rounds of values of 200, 3000, 16 and 200 bytes), then "
            "shut down", _prepare_redis,
            helpers=(("redis-benchmark", "redis-tools"), ("redis-cli", "redis-tools"))),
]
NAMES = [p.name for p in PROGRAMS]


def select(text: str | None, programs: list | None = None) -> list:
    """The programs (of `programs`, by default the replay study's) of a comma list ("all" or
    None: every one), in their list's order; ValueError on a bad name."""
    programs = PROGRAMS if programs is None else programs
    valid = [p.name for p in programs]
    if text is None or text == "all":
        return list(programs)
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in valid]
    if bad or not names:
        raise ValueError(f"unknown study program '{','.join(bad) or text}'; valid: "
                         f"{', '.join(valid)}, all")
    return [p for p in programs if p.name in names]
