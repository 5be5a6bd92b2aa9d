#!/usr/bin/env bash
# The test command of fitalloc:  bash tools/test.sh [--quick]
#
# First installs the Debian packages it needs when they are missing (tools/deps.sh test).
#
#   (a) Release build in build/            + ctest, then its compiled tests but meshing's own
#       (tests/mesh/, which turn meshing on themselves) again with FITALLOC_MESH=0, so that the
#       engine without meshing stays tested whatever FITALLOC_MESH's default is
#   (b) ASan+UBSan build in build-asan/    + ctest   (RelWithDebInfo)
#   (c) TSan build in build-tsan/          + ctest   (RelWithDebInfo)
#   (d) tools/check-format.sh
#   (e) libFuzzer build in build-fuzz/     + the fuzz tests (clang-14 or $FUZZ_CC; fixed run counts)
#   (f) aarch64 cross build in build-aarch64/ (Debian's gcc-aarch64-linux-gnu, Release) + its
#       compiled tests under qemu-aarch64, but those tests/qemu-excluded.txt names; skipped,
#       with a line saying why, without the cross compiler, qemu-user or (as root) binfmt_misc
#   (g) Debian packages in build-deb/: tools/package.sh --test (cpack, lintian, install, use,
#       remove); skipped, with a line saying why, when it cannot install them on this machine
# --quick runs (a) only, without the FITALLOC_MESH=0 run. Stops at the first failure. The last line is
# "N passed, 0 failed", with ", K skipped" added when K is not 0: tests that exited with 77, and
# stages or parts of one that could not run here (the aarch64 stage, leak detection), each named
# on a "skipped:" line just before it (a test with the reason it printed: tools/skip-reasons.sh).
# FITALLOC_TEST_SIZE (smoke by default, or real) is passed to the tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/help.sh"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

quick=0
for arg in "$@"; do
    case "$arg" in
    --quick) quick=1 ;;
    -h | --help) script_help "${BASH_SOURCE[0]}" ;;
    *) echo "usage: bash tools/test.sh [--quick]" >&2 && exit 2 ;;
    esac
done

export FITALLOC_TEST_SIZE=${FITALLOC_TEST_SIZE:-smoke}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# die_after_fork=0: the fork test's child starts threads, which TSan refuses by default.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:die_after_fork=0}
CC=${CC:-cc}

# On a fresh Debian machine (as root or with password-less sudo) this installs what is missing.
bash "$root/tools/deps.sh" test --if-missing || exit 1
for tool in cmake ctest ninja "$CC"; do
    command -v "$tool" >/dev/null || { echo "tools/test.sh: $tool not found" >&2; exit 1; }
done

passed=0
failed=0
skipped=0
skipped_stages=() # what could not run here, each counted in $skipped
skipped_tests=()  # "skipped: NAME: REASON" of each test that exited with 77
start=$SECONDS
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# skip_stage <what and why>: a stage, or a part of one, that cannot run on this machine.
skip_stage() {
    echo "tools/test.sh: skipped: $*" >&2
    skipped_stages+=("$*")
    skipped=$((skipped + 1))
}

summary() { # the closing line CI reads
    local line="$passed passed, $failed failed" stage
    for stage in "${skipped_tests[@]}"; do
        echo "$stage"
    done
    for stage in "${skipped_stages[@]}"; do
        echo "skipped: $stage"
    done
    ((skipped > 0)) && line+=", $skipped skipped"
    echo "$line"
}

die() {
    echo "tools/test.sh: $*" >&2
    summary
    exit 1
}

banner() { printf '\n==== %s (%ds)\n' "$*" $((SECONDS - start)); }

# build <dir> <cmake args...>: configure with Ninja and build.
build() {
    local dir=$1
    shift
    cmake -S "$root" -B "$root/$dir" -G Ninja \
        -DFITALLOC_TEST_SIZE="$FITALLOC_TEST_SIZE" "$@" ||
        die "configuring $dir failed"
    cmake --build "$root/$dir" || die "building $dir failed"
}

# run_ctest <dir> [command prefix...] [-- ctest arguments...]: run the tests and add up the counts.
run_ctest() {
    local dir=$1
    shift
    local log="$root/$dir/ctest.log" rc=0 prefix=() args=()
    while (($#)) && [[ "$1" != -- ]]; do
        prefix+=("$1")
        shift
    done
    (($#)) && shift && args=("$@")
    "${prefix[@]}" ctest --test-dir "$root/$dir" --output-on-failure -j2 --no-tests=error \
        "${args[@]}" 2>&1 | tee "$log" || rc=$?

    local counts total nfailed nskipped
    counts=$(sed -n 's/.*tests passed, \([0-9]\+\) tests\{0,1\} failed out of \([0-9]\+\).*/\1 \2/p' "$log" | tail -n 1)
    nskipped=$(awk '/^The following tests did not run:/ { on = 1; next }
                    on && /\((Skipped|Disabled)\)[[:space:]]*$/ { n++ }
                    on && !/[^[:space:]]/ { on = 0 }
                    END { print n + 0 }' "$log")
    if [[ -n "$counts" ]]; then
        read -r nfailed total <<<"$counts"
        failed=$((failed + nfailed))
        skipped=$((skipped + nskipped))
        passed=$((passed + total - nfailed - nskipped))
    fi
    # ctest prints no output of a skipped test: each one's reason, from its own output.
    if ((nskipped > 0)); then
        local reasons
        reasons=$(bash "$root/tools/skip-reasons.sh" "$log" "$root/$dir/Testing/Temporary/LastTest.log") ||
            die "could not read why the tests of $dir skipped"
        if [[ -n "$reasons" ]]; then
            echo "$reasons"
            mapfile -t -O "${#skipped_tests[@]}" skipped_tests <<<"$reasons"
        fi
    fi
    if ((rc != 0)); then
        [[ -n "$counts" ]] || failed=$((failed + 1)) # ctest itself failed (no tests, ...)
        die "tests failed in $dir (log: $dir/ctest.log)"
    fi
    [[ -n "$counts" ]] || die "could not read the test counts of $dir from ctest's output"
}

# probe <name> <flags> [command prefix...]: does a trivial threaded program run under a sanitizer?
probe() {
    local name=$1 flags=$2
    shift 2
    local src="$scratch/probe.c" bin="$scratch/probe_$name"
    cat >"$src" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static void *run(void *arg) { return arg; }
int main(void)
{
    pthread_t t;
    char *p = malloc(64);
    if (pthread_create(&t, NULL, run, p) != 0) return 1;
    pthread_join(t, NULL);
    free(p);
    puts("probe ok");
    return 0;
}
EOF
    # shellcheck disable=SC2086 # flags are meant to be split
    if ! "$CC" $flags -g -o "$bin" "$src" -pthread >"$scratch/probe_$name.log" 2>&1; then
        cat "$scratch/probe_$name.log" >&2
        return 2
    fi
    "$@" "$bin" >>"$scratch/probe_$name.log" 2>&1
}

# ---------------------------------------------------------------------------
banner "(a) Release build: build/"
build build -DCMAKE_BUILD_TYPE=Release -DFITALLOC_SANITIZE= -DFITALLOC_OVERRIDE=ON
banner "(a) Release tests"
run_ctest build

if ((!quick)); then
    banner "(a) Release compiled tests with meshing off (FITALLOC_MESH=0)"
    no_mesh=$(find tests -mindepth 2 -maxdepth 2 \( -name 'test_*.c' -o -name 'test_*.cpp' \) |
        sed -E 's#^tests/([^/]+)/test_(.*)\.(c|cpp)$#\1/\2#' | grep -v '^mesh/' | sort | paste -sd '|')
    run_ctest build env FITALLOC_MESH=0 -- -R "^(${no_mesh})\$"
fi

if ((!quick)); then
    # -----------------------------------------------------------------------
    banner "(b) AddressSanitizer + UBSan build: build-asan/"
    rc=0
    probe asan "-fsanitize=address,undefined" || rc=$?
    if ((rc == 2)); then
        die "the compiler cannot build with -fsanitize=address,undefined (libasan8/libubsan1 missing?)"
    elif ((rc != 0)); then
        if grep -q "LeakSanitizer has encountered a fatal error" "$scratch/probe_asan.log"; then
            skip_stage "(b) leak detection: LeakSanitizer cannot run here (ptrace not allowed?)"
            ASAN_OPTIONS="${ASAN_OPTIONS//detect_leaks=1/detect_leaks=0}"
            [[ "$ASAN_OPTIONS" == *detect_leaks=0* ]] || ASAN_OPTIONS+=":detect_leaks=0"
            export ASAN_OPTIONS
        else
            cat "$scratch/probe_asan.log" >&2
            die "a trivial AddressSanitizer program fails on this machine"
        fi
    fi
    build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFITALLOC_SANITIZE=address
    banner "(b) AddressSanitizer tests"
    run_ctest build-asan

    # -----------------------------------------------------------------------
    banner "(c) ThreadSanitizer build: build-tsan/"
    tsan_prefix=()
    rc=0
    probe tsan "-fsanitize=thread" || rc=$?
    if ((rc == 2)); then
        die "the compiler cannot build with -fsanitize=thread (gcc-12 needs libtsan2: apt-get install libtsan2)"
    elif ((rc != 0)); then
        # Kernels with many mmap ASLR bits (vm.mmap_rnd_bits > 28) break TSan's memory
        # layout ("FATAL: ThreadSanitizer: unexpected memory mapping"); without ASLR it works.
        echo "tools/test.sh: ThreadSanitizer probe failed:" >&2
        sed -n '1,5p' "$scratch/probe_tsan.log" >&2
        command -v setarch >/dev/null || die "setarch not found (util-linux) to disable ASLR for TSan"
        probe tsan "-fsanitize=thread" setarch "$(uname -m)" -R ||
            { cat "$scratch/probe_tsan.log" >&2; die "ThreadSanitizer does not work here, even with setarch -R"; }
        echo "tools/test.sh: running the TSan tests with ASLR disabled (setarch -R)" >&2
        tsan_prefix=(setarch "$(uname -m)" -R)
    fi
    build build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFITALLOC_SANITIZE=thread
    banner "(c) ThreadSanitizer tests"
    run_ctest build-tsan "${tsan_prefix[@]}"

    # -----------------------------------------------------------------------
    banner "(d) clang-format check"
    bash "$root/tools/check-format.sh" || die "source formatting differs from .clang-format"

    # -----------------------------------------------------------------------
    banner "(e) libFuzzer build: build-fuzz/"
    fuzz_cc=${FUZZ_CC:-$(command -v clang-14 || command -v clang || true)}
    [[ -n "$fuzz_cc" ]] || die "clang not found for the libFuzzer build (apt-get install clang-14)"
    fuzz_args=(-DCMAKE_C_COMPILER="$fuzz_cc")
    fuzz_cxx=${fuzz_cc/clang/clang++}
    command -v "$fuzz_cxx" >/dev/null && fuzz_args+=(-DCMAKE_CXX_COMPILER="$fuzz_cxx")
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' \
        >"$scratch/probe_fuzz.c"
    { "$fuzz_cc" -fsanitize=fuzzer,address,undefined -o "$scratch/probe_fuzz" "$scratch/probe_fuzz.c" &&
        "$scratch/probe_fuzz" -runs=10; } >"$scratch/probe_fuzz.log" 2>&1 || {
        cat "$scratch/probe_fuzz.log" >&2
        die "$fuzz_cc cannot build and run a -fsanitize=fuzzer program" \
            "(libFuzzer comes with libclang-rt-14-dev: apt-get install clang-14 libclang-rt-14-dev)"
    }
    build build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFITALLOC_FUZZ=ON -DFITALLOC_TESTS=OFF "${fuzz_args[@]}"
    banner "(e) fuzz tests"
    run_ctest build-fuzz -- -L fuzz
fi

# ---------------------------------------------------------------------------
# qemu_binfmt: can the kernel start aarch64 programs through qemu (binfmt_misc)? Tests start
# child programs (fitalloc-replay, themselves) with exec, which needs it. Registers the
# handler of Debian's qemu-user-binfmt when we are root and it is not registered yet.
qemu_binfmt() {
    local handler=/proc/sys/fs/binfmt_misc/qemu-aarch64 conf=/usr/lib/binfmt.d/qemu-aarch64.conf
    [[ -e "$handler" ]] && return 0
    ((EUID == 0)) && [[ -r "$conf" ]] || return 1
    [[ -e /proc/sys/fs/binfmt_misc/register ]] ||
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || return 1
    grep -v '^#' "$conf" >/proc/sys/fs/binfmt_misc/register 2>/dev/null || return 1
    [[ -e "$handler" ]]
}

if ((!quick)); then
    if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
        skip_stage "(f) aarch64: gcc-aarch64-linux-gnu or qemu-user not installed"
    elif ! qemu_binfmt; then
        skip_stage "(f) aarch64: qemu-aarch64 is not registered with binfmt_misc" \
            "(run as root with qemu-user-binfmt installed)"
    else
        banner "(f) aarch64 cross build: build-aarch64/"
        build build-aarch64 -DCMAKE_BUILD_TYPE=Release -DFITALLOC_OVERRIDE=ON \
            -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake"
        banner "(f) aarch64 tests under qemu-aarch64"
        excluded=$(sed 's/#.*//' "$root/tests/qemu-excluded.txt" | awk 'NF { print $1 }' | paste -sd '|')
        run_ctest build-aarch64 env QEMU_LD_PREFIX=/usr/aarch64-linux-gnu FITALLOC_PURGE_THREAD=0 \
            -- -E "^(${excluded})\$" --timeout 600
    fi
fi

# (g) Debian packages: tools/package.sh --test (exit 77: skipped, it says why).
if ((!quick)); then
    banner "(g) Debian packages: build-deb/"
    rc=0
    bash "$root/tools/package.sh" --test || rc=$?
    if ((rc == 77)); then
        skip_stage "(g) Debian packages (the reason is above)"
    elif ((rc == 0)); then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        die "the Debian packages' test failed (tools/package.sh --test)"
    fi
fi

banner "done"
summary
