# ctest labels: api errors
# fitalloc profile reads gperftools' heap profiles: the totals and the sites of a profile made
# here, in order with their shares, and of a sampled one, scaled back; the sites of a real one (tcmalloc's HEAPPROFILE of
# profile_sites.c, dumped at its peak and at exit) named by function and line, the exit's the
# leak alone; the flame graph written, as SVG with the frame names in it, or as PNG; a file
# that is no profile named with its line. Running a program: the options reach it, and bad
# input (a rate of 0 or unparsable, an -o that is no directory, a program not found) gets its
# message and status before anything runs.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_matplotlib
cd "$WORK"

# A profile made here: three blocks live, two at one stack; addresses in no mapping are named
# by their value.
cat >made.heap <<'P'
heap profile:      3:  3145728 [    10:  9437184] @ heapprofile
     2:  2097152 [     4:  4194304] @ 0x1001 0x2001
     1:  1048576 [     5:  4194304] @ 0x3001 0x2001
     0:        0 [     1:  1048576] @ 0x4001

MAPPED_LIBRARIES:
00400000-00401000 r-xp 00000000 08:01 1 /nonexistent/program
P
run_cmd profile --show made.heap -o .
expect_rc 0 "--show made.heap"
expect_in out "3.0 MiB live in 3 blocks; 9.0 MiB allocated in 10" "made.heap: totals"
grep -Eq '^ +2\.0 MiB +66\.7% +2  0x1001  < 0x2001$' out || fail "made.heap: first site: $(cat out)"
grep -Eq '^ +1\.0 MiB +33\.3% +1  0x3001  < 0x2001$' out || fail "made.heap: second site: $(cat out)"
[ "$(grep -c '%' out)" = 2 ] || fail "made.heap: not two sites (a site with nothing live is no site)"
[ -s made.svg ] || fail "made.heap: no flame graph made.svg"

# FITALLOC_PROFILE's kind, heap_v2/RATE: samples scaled back as pprof does, by
# 1 / (1 - exp(-(bytes / count) / rate)) = 2.54 for 4 blocks of 256 KiB at 512 KiB; a signal's
# dump (PREFIX.PID.N.heap) is named so.
printf 'heap profile: 4: 1048576 [4: 1048576] @ heap_v2/524288\n 4: 1048576 [4: 1048576] @ 0x10\n' >p.9.3.heap
run_cmd profile --show p.9.3.heap
expect_rc 0 "--show a heap_v2 profile"
expect_in out "at dump 3 of pid 9: p.9.3.heap" "heap_v2: the dump's name"
expect_in out "2.5 MiB live in 10 blocks" "heap_v2: totals scaled"
grep -Eq '^ +2\.5 MiB +100\.0% +10  0x10$' out || fail "heap_v2: the site scaled: $(cat out)"

# Not profiles: the file and line are named, status 1.
printf 'hello\n' >bad.heap
run_cmd profile --show bad.heap
expect_rc 1 "--show bad.heap"
expect_in err "fitalloc profile: bad.heap: line 1: not a heap profile" "bad.heap"
sed '3s/.*/  2: 12 [oops/' made.heap >bad.heap
run_cmd profile --show bad.heap
expect_rc 1 "--show a bad stack line"
expect_in err "bad.heap: line 3: not a stack line" "a bad stack line"
sed '1s/heapprofile/heap_v2\/0/' made.heap >bad.heap
run_cmd profile --show bad.heap
expect_rc 1 "--show a rate of 0"
expect_in err "bad.heap: line 1: profile kind 'heap_v2/0' is not read" "a rate of 0 in the file"
: >empty.heap
run_cmd profile --show empty.heap
expect_rc 1 "--show an empty file"
expect_in err "empty.heap: empty (the process ended before writing it" "an empty file"
run_cmd profile --show missing.heap
expect_rc 1 "--show missing.heap"
expect_in err "missing.heap: No such file or directory" "missing.heap"

# A real profile of known sites: tcmalloc's, at the peak (the program calls HeapProfilerDump)
# and at exit, named as FITALLOC_PROFILE names its files.
tcmalloc=$(ldconfig -p | sed -n 's/^\s*libtcmalloc\.so\.4 (libc6,x86-64) => //p' | head -n 1)
if [ -z "$tcmalloc" ]; then
    echo "libtcmalloc.so.4 not installed (libgoogle-perftools4): the real profile is skipped"
else
    "${CC:-cc}" -O2 -g -o sites "$HERE/profile_sites.c" -ldl || fail "cc profile_sites.c"
    LD_PRELOAD=$tcmalloc HEAPPROFILE=$WORK/hp ./sites 1 2>/dev/null || fail "sites under tcmalloc"
    mv hp.0001.heap sites.77.peak.heap && mv hp.0002.heap sites.77.exit.heap ||
        fail "tcmalloc wrote no peak and exit profiles: $(ls)"
    run_cmd profile --show sites.77.peak.heap sites.77.exit.heap -o .
    expect_rc 0 "--show tcmalloc's profiles"
    sed -n '/^at the peak of pid 77/,/^$/p' out >peak.txt
    sed -n '/^at exit (not freed) of pid 77/,/^$/p' out >exit.txt
    expect_in peak.txt "76.0 MiB live in 133,120 blocks" "peak: totals"
    for site in '64\.0 MiB +84\.2% +1,024  hold_big_blocks profile_sites\.c:[0-9]+  < main ' \
        '8\.0 MiB +10\.5% +131,072  hold_small_blocks profile_sites\.c:[0-9]+  < main ' \
        '4\.0 MiB +5\.3% +1,024  leak_pages profile_sites\.c:[0-9]+  < main '; do
        grep -Eq "^ +$site" peak.txt || fail "peak: no line '$site' in: $(cat peak.txt)"
    done
    grep -Eq '^ +4\.0 MiB +100\.0% +1,024  leak_pages ' exit.txt || fail "exit: $(cat exit.txt)"
    [ "$(grep -c '%' exit.txt)" = 1 ] || fail "exit: more than the leak: $(cat exit.txt)"
    expect_in out "flame graph: $WORK/sites.77.peak.svg" "the flame graph named"
    expect_not_in out "sites.77.exit.svg" "a flame graph of the exit"
    for frame in hold_big_blocks hold_small_blocks leak_pages main; do
        grep -q "<title>$frame: " sites.77.peak.svg || fail "flame graph: no frame $frame"
    done
    run_cmd profile --show sites.77.peak.heap --format png --top 1
    expect_rc 0 "--format png --top 1"
    expect_png sites.77.peak.png 5000 "the flame graph as PNG"
    [ "$(grep -c '%' out)" = 1 ] || fail "--top 1: $(cat out)"
fi

# Running a program: the profile's options and the lab's reach it.
run_cmd profile --rate 64K --policy first -o "$WORK" -- env
expect_in out "FITALLOC_PROFILE=$WORK/env" "FITALLOC_PROFILE"
expect_in out "FITALLOC_PROFILE_RATE=65536" "--rate 64K"
expect_in out "FITALLOC_MODE=lab" "--policy: the lab"
expect_in out "FITALLOC_POLICY=first" "--policy first"

# Bad input: a message, a status, and the program not run.
for rate in 0 abc; do
    run_cmd profile --rate "$rate" -- echo ran
    expect_rc 2 "--rate $rate"
    expect_not_in out ran "--rate $rate: the program ran"
done
expect_in err "'abc' is not a size" "--rate abc"
run_cmd profile --rate 0 -- true
expect_in err "a rate of 0 bytes samples nothing" "--rate 0"
run_cmd profile -o /nonexistent/dir -- echo ran
expect_rc 1 "-o /nonexistent/dir"
expect_in err "fitalloc profile: -o /nonexistent/dir: no such directory" "-o /nonexistent/dir"
expect_not_in out ran "-o /nonexistent/dir: the program ran"
run_cmd profile -o made.heap -- echo ran
expect_rc 1 "-o a file"
expect_in err "-o made.heap: not a directory" "-o a file"
run_cmd profile -- /nonexistent/program
expect_rc 127 "a missing program"
expect_in err "fitalloc profile: /nonexistent/program: command not found" "a missing program"
run_cmd profile
expect_rc 2 "nothing to profile"
run_cmd profile --show made.heap -- true
expect_rc 2 "--show and a program"
echo "command/profile: ok"
