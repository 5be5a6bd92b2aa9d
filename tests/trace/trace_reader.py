"""A reader of FITALLOC_TRACE files for the tests of tests/trace, written from the format as
include/fitalloc-trace.h and docs/trace.md describe it (not from the library's code), so that
it doubles as a check of the documented format. Used as a module by the tests' scripts:

    import trace_reader as tr
    t = tr.read(path)            # validates the header and every complete record
    tr.check_order(t.records)    # seq unique; each thread's records in file order by seq
    tr.check_live(t.records)     # in seq order, every free frees a live block, ...
"""
import struct
import sys

HEADER = struct.Struct("<8sIIIIIIQ24s")  # x86-64: the writer's byte order is little-endian
RECORD = struct.Struct("<QQQQQIBBBB")
MAGIC = b"FATRACE\0"
VERSION = 1
CHECK_SEED = 0xA5
SIZE_MAX = (1 << 64) - 1

MALLOC, CALLOC, REALLOC, ALIGNED, FREE, NEW, NEW_ARRAY, DELETE, DELETE_ARRAY = range(1, 10)
OP_NAMES = {MALLOC: "malloc", CALLOC: "calloc", REALLOC: "realloc", ALIGNED: "aligned",
            FREE: "free", NEW: "new", NEW_ARRAY: "new[]", DELETE: "delete",
            DELETE_ARRAY: "delete[]"}
ALLOCATIONS = {MALLOC, CALLOC, ALIGNED, NEW, NEW_ARRAY}
FREES = {FREE, DELETE, DELETE_ARRAY}


class TraceError(Exception):
    pass


class Record:
    __slots__ = ("index", "seq", "time_ns", "size", "in_", "out", "thread", "op", "align_log2")

    def __init__(self, index, fields):
        (self.seq, self.time_ns, self.size, self.in_, self.out, self.thread, self.op,
         self.align_log2, _flags, _check) = fields
        self.index = index

    def key(self):
        """What the program knows of its call: op, size, alignment, in, out."""
        return (self.op, self.size, self.align_log2, self.in_, self.out)

    def __repr__(self):
        return (f"#{self.index} seq {self.seq} t{self.thread} {OP_NAMES.get(self.op, self.op)} "
                f"size {self.size} align 2^{self.align_log2} in {self.in_:#x} out {self.out:#x}")


class Trace:
    def __init__(self, header, records, partial):
        self.header = header      # dict of the header's fields
        self.records = records    # in file order
        self.partial = partial    # bytes of a last record cut short (0 if none)


def check_byte(raw):
    x = CHECK_SEED
    for b in raw[:47]:
        x ^= b
    return x


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HEADER.size:
        raise TraceError(f"{path}: {len(data)} bytes, shorter than the 64-byte header")
    magic, version, header_size, record_size, pid, parent_pid, mode, start_ns, reserved = \
        HEADER.unpack_from(data, 0)
    problems = []
    if magic != MAGIC:
        problems.append(f"byte 0: magic {magic!r}")
    if version != VERSION:
        problems.append(f"byte 8: version {version}")
    if header_size != HEADER.size:
        problems.append(f"byte 12: header_size {header_size}")
    if record_size != RECORD.size:
        problems.append(f"byte 16: record_size {record_size}")
    if pid == 0:
        problems.append("byte 20: pid 0")
    if mode not in (0, 1):
        problems.append(f"byte 28: mode {mode}")
    if reserved != bytes(24):
        problems.append("byte 40: reserved not zero")
    if problems:
        raise TraceError(f"{path}: bad header: " + "; ".join(problems))
    header = dict(pid=pid, parent_pid=parent_pid, mode=mode, start_ns=start_ns)
    body = len(data) - HEADER.size
    count, partial = divmod(body, RECORD.size)
    records = []
    for i in range(count):
        offset = HEADER.size + i * RECORD.size
        raw = data[offset:offset + RECORD.size]
        fields = RECORD.unpack(raw)
        if fields[9] != check_byte(raw):
            raise TraceError(f"{path}: byte {offset}: record {i} has a bad check byte")
        if not 1 <= fields[6] <= 9:
            raise TraceError(f"{path}: byte {offset + 44}: record {i} has op {fields[6]}")
        if fields[8] != 0:
            raise TraceError(f"{path}: byte {offset + 46}: record {i} has flags {fields[8]}")
        records.append(Record(i, fields))
    return Trace(header, records, partial)


def in_seq_order(records):
    return sorted(records, key=lambda r: r.seq)


def check_order(records):
    """seq is unique, and each thread's records appear in the file in the order of their seq
    (a thread writes its buffers in order)."""
    seen = {}
    for r in records:
        if r.seq in seen:
            raise TraceError(f"seq {r.seq} twice: {seen[r.seq]} and {r}")
        seen[r.seq] = r
    last = {}
    for r in records:
        if r.thread in last and last[r.thread].seq >= r.seq:
            raise TraceError(f"thread {r.thread}: {r} after {last[r.thread]} in the file")
        last[r.thread] = r


def check_threads(records):
    """Threads are numbered from 0 without gaps; returns how many there are."""
    numbers = sorted({r.thread for r in records})
    if numbers != list(range(len(numbers))):
        raise TraceError(f"thread numbers {numbers[:20]} are not 0..{len(numbers) - 1}")
    return len(numbers)


def check_live(records, foreign_frees_ok=False):
    """Replays the records in seq order: every allocation returns a block that is not live,
    every free, delete and realloc gets a live block (or NULL). Returns the live blocks at the
    end, as {address: record}. foreign_frees_ok: a free of a block the trace never returned
    is allowed (a trace whose first part is missing)."""
    live = {}
    for r in in_seq_order(records):
        if r.op in ALLOCATIONS:
            if r.out:
                if r.out in live:
                    raise TraceError(f"{r} returns a block that is live since {live[r.out]}")
                live[r.out] = r
        elif r.op in FREES:
            if r.out:
                raise TraceError(f"{r}: a free with an out pointer")
            if r.in_:
                if r.in_ not in live and not foreign_frees_ok:
                    raise TraceError(f"{r} frees a block that is not live")
                live.pop(r.in_, None)
        elif r.op == REALLOC:
            if r.in_ and r.in_ not in live and not foreign_frees_ok:
                raise TraceError(f"{r} reallocates a block that is not live")
            if r.out or (r.in_ and r.size == 0):  # moved, kept, or realloc(p, 0): p is freed
                live.pop(r.in_, None)
            if r.out:
                if r.out in live:
                    raise TraceError(f"{r} returns a block that is live since {live[r.out]}")
                live[r.out] = r
    return live


def find_run(records, expected):
    """The records (in seq order) of the thread where `expected` (a list of key() tuples)
    appears as a contiguous run, starting with its first entry; raises if there is none."""
    ordered = in_seq_order(records)
    by_thread = {}
    for r in ordered:
        by_thread.setdefault(r.thread, []).append(r)
    best = None
    for thread, rs in by_thread.items():
        for start, r in enumerate(rs):
            if r.key() != expected[0]:
                continue
            got = rs[start:start + len(expected)]
            matched = 0
            while matched < len(got) and got[matched].key() == expected[matched]:
                matched += 1
            if matched == len(expected):
                return got
            if best is None or matched > best[0]:
                best = (matched, got, thread)
    if best is None:
        raise TraceError(f"no record is {expected[0]} (op, size, align_log2, in, out)")
    matched, got, thread = best
    have = got[matched] if matched < len(got) else "the end of the thread's records"
    raise TraceError(f"thread {thread}: call {matched} of the program's log is "
                     f"{expected[matched]}, the trace has {have}")


def read_log(path):
    """The program's own log of its calls: lines 'op size align_log2 in out' (decimal)."""
    calls = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 5 and parts[0].isdigit():
                calls.append(tuple(int(p) for p in parts))
    return calls


if __name__ == "__main__":
    # python3 trace_reader.py FILE: print the records in seq order (for debugging a test).
    t = read(sys.argv[1])
    print(t.header, len(t.records), "records", t.partial, "bytes of a partial record")
    for rec in in_seq_order(t.records):
        print(rec)
