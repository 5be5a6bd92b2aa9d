"""A reader of FITALLOC_TRACE files for the tests of tests/trace, written from the format as
include/fitalloc-trace.h and docs/trace.md describe it (not from the library's code), so that
it doubles as a check of the documented format. Used as a module by the tests' scripts:

    import trace_reader as tr
    t = tr.read(path)            # validates the header, every block's checksum, every record
    tr.check_order(t.records)    # each thread numbered from 0 in file order, times growing
    tr.check_live(t.records)     # in program order, every free frees a live block, ...
"""
import struct
import sys

HEADER = struct.Struct("<8sIIIIIIQII16s")  # x86-64: the writer's byte order is little-endian
BLOCK = struct.Struct("<IIIIQQQQ")
MAGIC = b"FATRACE\0"
VERSION = 2
BLOCK_TAG = 0x324B4C42
CHECKSUM_SEED = 0x4641545241434532
CHECKSUM_MULTIPLIER = 0x9E3779B97F4A7C15
F_TIME, F_SIZE, F_ALIGN, F_BYTES = 0x10, 0x20, 0x40, 0x80
MASK = (1 << 64) - 1
SIZE_MAX = MASK

MALLOC, CALLOC, REALLOC, ALIGNED, FREE, NEW, NEW_ARRAY, DELETE, DELETE_ARRAY = range(1, 10)
OP_NAMES = {MALLOC: "malloc", CALLOC: "calloc", REALLOC: "realloc", ALIGNED: "aligned",
            FREE: "free", NEW: "new", NEW_ARRAY: "new[]", DELETE: "delete",
            DELETE_ARRAY: "delete[]"}
ALLOCATIONS = {MALLOC, CALLOC, ALIGNED, NEW, NEW_ARRAY}
FREES = {FREE, DELETE, DELETE_ARRAY}
HAS_IN = FREES | {REALLOC}
HAS_OUT = ALLOCATIONS | {REALLOC}


class TraceError(Exception):
    pass


class Record:
    """One record. `seq` is its place in the program order (by time_ns, then thread), given
    once the whole file is read; `number` its number among its thread's records."""
    __slots__ = ("index", "offset", "seq", "number", "time_ns", "size", "in_", "out", "thread",
                 "op", "align_log2")

    def __init__(self, index, offset, thread, number, op, time_ns, align_log2, size, in_, out):
        self.index, self.offset, self.thread, self.number, self.op = index, offset, thread, \
            number, op
        self.seq, self.time_ns, self.align_log2 = None, time_ns, align_log2
        self.size, self.in_, self.out = size, in_, out

    def key(self):
        """What the program knows of its call: op, size, alignment, in, out."""
        return (self.op, self.size, self.align_log2, self.in_, self.out)

    def __repr__(self):
        return (f"#{self.index} seq {self.seq} t{self.thread}.{self.number} time {self.time_ns} "
                f"{OP_NAMES.get(self.op, self.op)} "
                f"size {self.size} align 2^{self.align_log2} in {self.in_:#x} out {self.out:#x}")


class Block:
    __slots__ = ("offset", "thread", "index", "records", "bytes", "complete")

    def __init__(self, offset, thread, index, records, nbytes, complete):
        self.offset, self.thread, self.index, self.records = offset, thread, index, records
        self.bytes, self.complete = nbytes, complete


class Trace:
    def __init__(self, header, records, blocks, partial, lost):
        self.header = header      # dict of the header's fields
        self.records = records    # in file order, numbered (seq) in program order
        self.blocks = blocks      # in file order; only the last one may be incomplete
        self.partial = partial    # bytes after the last complete record (0: the file is whole)
        self.lost = lost          # records missing from the threads' numbering


def checksum(data):
    """The block checksum of include/fitalloc-trace.h over data (its 8-byte words)."""
    h = CHECKSUM_SEED
    data = data + bytes(-len(data) % 8)
    for (word,) in struct.iter_unpack("<Q", data):
        h = ((h ^ word) * CHECKSUM_MULTIPLIER) & MASK
    return h


class _Cut(Exception):
    """The record goes on past the end of the bytes there are."""


def _varint(data, pos, end):
    value = shift = 0
    while True:
        if pos >= end:
            raise _Cut()
        byte = data[pos]
        pos += 1
        if shift == 63 and byte > 1:
            raise TraceError("a varint above 2^64 - 1")
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _decode(data, pos, end, state):
    """One record at pos: (op, time_ns, align_log2, size, in, out), the next position and the
    new state (time_ns, pointer); _Cut if it does not end before `end`."""
    time_ns, pointer = state
    if pos >= end:
        raise _Cut()
    kind = data[pos]
    pos += 1
    op = kind & 15
    if not 1 <= op <= 9:
        raise TraceError(f"unknown op {op}")
    d = 0
    if kind & F_TIME:
        d, pos = _varint(data, pos, end)
    time_ns = (time_ns + 1 + d) & MASK
    align_log2 = 0
    if kind & F_ALIGN:
        if pos >= end:
            raise _Cut()
        align_log2 = data[pos]
        pos += 1
        if not 1 <= align_log2 <= 63:
            raise TraceError(f"align_log2 {align_log2}")
    size = 0
    if kind & F_SIZE:
        size, pos = _varint(data, pos, end)
    unit = 1 if kind & F_BYTES else 16
    pointers = []
    for present in (op in HAS_IN, op in HAS_OUT):
        p = 0
        if present:
            z, pos = _varint(data, pos, end)
            delta = (z >> 1) ^ -(z & 1)
            p = (pointer + delta * unit) & MASK
            if p:
                pointer = p
        pointers.append(p)
    return (op, time_ns, align_log2, size, pointers[0], pointers[1]), pos, (time_ns, pointer)


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HEADER.size:
        raise TraceError(f"{path}: {len(data)} bytes, shorter than the 64-byte header")
    (magic, version, header_size, block_header_size, pid, parent_pid, mode, start_ns,
     clock_period, reserved32, reserved) = HEADER.unpack_from(data, 0)
    problems = []
    if magic != MAGIC:
        problems.append(f"byte 0: magic {magic!r}")
    if version != VERSION:
        problems.append(f"byte 8: version {version}")
    if header_size != HEADER.size:
        problems.append(f"byte 12: header_size {header_size}")
    if block_header_size != BLOCK.size:
        problems.append(f"byte 16: block_header_size {block_header_size}")
    if pid == 0:
        problems.append("byte 20: pid 0")
    if mode not in (0, 1):
        problems.append(f"byte 28: mode {mode}")
    if clock_period < 1:
        problems.append(f"byte 40: clock_period {clock_period}")
    if reserved32 != 0 or reserved != bytes(16):
        problems.append("byte 44: reserved not zero")
    if problems:
        raise TraceError(f"{path}: bad header: " + "; ".join(problems))
    header = dict(pid=pid, parent_pid=parent_pid, mode=mode, start_ns=start_ns,
                  clock_period=clock_period)
    records, blocks, next_number, lost = [], [], {}, 0
    pos, partial = HEADER.size, 0
    while pos < len(data):
        if len(data) - pos < BLOCK.size:  # the file ends inside a block header
            partial = len(data) - pos
            break
        tag, thread, count, nbytes, index, time_ns, pointer, check = BLOCK.unpack_from(data, pos)
        where = f"{path}: byte {pos}: block {len(blocks)}"
        if tag != BLOCK_TAG:
            raise TraceError(f"{where}: tag {tag:#x}")
        end = pos + BLOCK.size + nbytes
        complete = end <= len(data)
        if complete and check != checksum(data[pos:pos + 40] + bytes(8) + data[pos + 48:end]):
            raise TraceError(f"{where}: bad checksum")
        if index < next_number.get(thread, 0):
            raise TraceError(f"{where}: thread {thread}'s records from {index} again")
        lost += index - next_number.get(thread, 0)
        blocks.append(Block(pos, thread, index, count, nbytes, complete))
        at, state, decoded = pos + BLOCK.size, (time_ns, pointer), 0
        limit = min(end, len(data))
        while decoded < count:
            try:
                fields, next_at, state = _decode(data, at, limit, state)
            except _Cut:
                if complete:
                    raise TraceError(f"{path}: byte {at}: record {len(records)} goes past the "
                                     f"end of block {len(blocks) - 1}")
                break
            except TraceError as e:
                raise TraceError(f"{path}: byte {at}: record {len(records)}: {e}")
            op, rtime, align_log2, size, in_, out = fields
            records.append(Record(len(records), at, thread, index + decoded, op, rtime,
                                  align_log2, size, in_, out))
            at, decoded = next_at, decoded + 1
        next_number[thread] = index + decoded
        if not complete:
            partial = len(data) - at
            break
        if decoded != count or at != end:
            raise TraceError(f"{where}: {decoded} records in {at - pos - BLOCK.size} bytes, "
                             f"the header says {count} in {nbytes}")
        pos = end
    for seq, r in enumerate(sorted(records, key=lambda r: (r.time_ns, r.thread, r.index))):
        r.seq = seq
    return Trace(header, records, blocks, partial, lost)


def in_seq_order(records):
    """The program order: by time, then thread."""
    return sorted(records, key=lambda r: r.seq)


def check_order(records):
    """Each thread's records appear in the file numbered 0, 1, 2... (nothing lost, a thread
    writes its buffers in order) with times that grow, so (time_ns, thread) is unique."""
    last = {}
    for r in records:
        before = last.get(r.thread)
        if r.number != (before.number + 1 if before else 0):
            raise TraceError(f"thread {r.thread}: {r} after {before} in the file")
        if before and before.time_ns >= r.time_ns:
            raise TraceError(f"thread {r.thread}: {r} is not later than {before}")
        last[r.thread] = r


def check_threads(records):
    """Threads are numbered from 0 without gaps; returns how many there are."""
    numbers = sorted({r.thread for r in records})
    if numbers != list(range(len(numbers))):
        raise TraceError(f"thread numbers {numbers[:20]} are not 0..{len(numbers) - 1}")
    return len(numbers)


def check_live(records, foreign_frees_ok=False):
    """Replays the records in program order: every allocation returns a block that is not live,
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
    """The records (in program order) of the thread where `expected` (a list of key() tuples)
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
    # python3 trace_reader.py FILE: print the records in program order (to debug a test).
    t = read(sys.argv[1])
    print(t.header, len(t.records), "records in", len(t.blocks), "blocks,", t.partial,
          "bytes after the last complete record")
    for rec in in_seq_order(t.records):
        print(rec)
