# Small aligned allocations are sampled (aligned.cpp): 8 MiB each through aligned_alloc(64),
# posix_memalign(256), memalign(1024) and C++'s aligned operator new (alignas(128)), left live
# at exit, in the fast engine, in secure mode's library (whose aligned blocks the core does not
# count as it counts its mallocs) and in the lab. At a sample every 16 KiB, each site is about
# 512 samples (a standard deviation of 4.4 %): the exit profile must show each within 25 %.
# ctest labels: integrity
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/aligned" "$PROFILE_TESTS/aligned.cpp"
for how in fast secure lab; do
    lib=$FITALLOC_LIB extra=()
    [[ $how == secure ]] && lib=$FITALLOC_SECURE_LIB
    [[ $how == lab ]] && extra=(FITALLOC_MODE=lab)
    env "${extra[@]}" FITALLOC_PROFILE_RATE=16K FITALLOC_PROFILE="$WORK/$how" LD_PRELOAD="$lib" \
        "$WORK/aligned" >"$WORK/out" 2>"$WORK/err" ||
        { cat "$WORK/err" >&2; fail "$how: the program failed"; }
    [[ ! -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "$how: something on stderr"; }
    # One pprof run per profile, its four sites read from its text (first line of each).
    google-pprof --text --inuse_space "$WORK/aligned" "$WORK/$how".*.exit.heap \
        >"$WORK/text" 2>/dev/null
    for site in by_aligned_alloc by_posix_memalign by_memalign by_aligned_new; do
        mib=$(awk -v f=$site '$6 == f && !found { print $4; found = 1 }
                              END { if (!found) print 0 }' "$WORK/text")
        within "$mib" 8 25 || fail "$how: $site holds $mib MiB at exit, not 8 within 25 %"
        echo "$how: $site $mib MiB"
    done
done
