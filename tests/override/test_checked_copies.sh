#!/usr/bin/env bash
# Secure mode's checked copies (docs/security.md, "Checked copies"), under LD_PRELOAD of
# libfitalloc-secure.so with FITALLOC_SECURE=1: memcpy, memmove, memset and their __*_chk forms into a block of 8 B, 4 KiB,
# 256 KiB and 1 MiB (a large block) stop when they run past its end, from its start, from inside
# it or from its end, with "fitalloc: memcpy(): 32 bytes past the end of the 8-byte block at 0x..."; a
# copy that fits runs on, in secure mode and in the default mode. The __*_chk forms also stop,
# as the C library's do, when the copy is longer than the room they are told of, and run on
# when it fits that room exactly. Program: copies.c.
source "$(dirname "$0")/common.sh"
need_env FITALLOC_SECURE_LIB CC
make_workdir
here=$(cd "$(dirname "$0")" && pwd)
nm -D --defined-only "$FITALLOC_SECURE_LIB" | grep -qw memcpy || {
    echo "override/checked_copies: skipped ($FITALLOC_SECURE_LIB has no checked copies)"
    exit 77
}
"$CC" -O1 -fno-builtin -o "$WORK/copies" "$here/copies.c" ||
    fail "cannot build copies.c"

# run SECURE ARGS...: the program's exit status in $status, its stderr in $WORK/err.
run() {
    local secure=$1
    shift
    status=0
    (FITALLOC_SECURE=$secure LD_PRELOAD="$FITALLOC_SECURE_LIB" "$WORK/copies" "$@" \
        >"$WORK/out" 2>"$WORK/err"; exit $?) 2>/dev/null || status=$?
}

for fn in memcpy memmove memset __memcpy_chk __memmove_chk __memset_chk; do
    name=${fn#__}
    name=${name%_chk}
    for size in 8 4096 262144 1048576; do
        for offset in 0 3; do
            run 1 "$fn" "$size" "$offset" $((size - offset + 32))
            block=$(sed -n 's/^block //p' "$WORK/err")
            expected="fitalloc: $name(): 32 bytes past the end of the $size-byte block at $block"
            [ "$status" -eq 134 ] && grep -qF "$expected" "$WORK/err" ||
                fail "$fn of $((size - offset + 32)) bytes at $offset into $size bytes:" \
                    "status $status, stderr lacks \"$expected\": $(cat "$WORK/err")"
        done
        run 1 "$fn" "$size" "$size" 1 # from the block's end: one byte
        block=$(sed -n 's/^block //p' "$WORK/err")
        expected="fitalloc: $name(): 1 byte past the end of the $size-byte block at $block"
        [ "$status" -eq 134 ] && grep -qF "$expected" "$WORK/err" ||
            fail "$fn of 1 byte at the end of $size bytes: status $status, stderr lacks" \
                "\"$expected\": $(cat "$WORK/err")"
        for secure in 1 0; do
            run "$secure" "$fn" "$size" 3 $((size - 3))
            [ "$status" -eq 0 ] && grep -q "not caught" "$WORK/out" ||
                fail "$fn that fits $size bytes (FITALLOC_SECURE=$secure): status $status:" \
                    "$(cat "$WORK/err")"
        done
    done
done
for fn in __memcpy_chk __memmove_chk __memset_chk; do
    for secure in 0 1; do
        run "$secure" "$fn" 64 0 17 16
        [ "$status" -eq 134 ] && grep -qF "buffer overflow detected" "$WORK/err" ||
            fail "$fn of 17 bytes into a room of 16 (FITALLOC_SECURE=$secure): status $status," \
                "stderr lacks \"buffer overflow detected\": $(cat "$WORK/err")"
        run "$secure" "$fn" 64 0 16 16
        [ "$status" -eq 0 ] && grep -q "not caught" "$WORK/out" ||
            fail "$fn of 16 bytes into a room of 16 (FITALLOC_SECURE=$secure): status $status:" \
                "$(cat "$WORK/err")"
    done
done
echo "override/checked_copies: ok"
