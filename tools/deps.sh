#!/usr/bin/env bash
# The Debian 12 packages fitalloc's commands need, in one place:
#   bash tools/deps.sh test|bench|package [--if-missing]
#
# test   what tools/test.sh needs (compilers, cmake, sanitizer runtimes, clang-format, valgrind,
#        clang with libFuzzer (libclang-rt-14-dev) for the fuzz tests, Python with matplotlib for
#        the bench harness test, the peers for the override tests, z3 for the smt workload
#        the workloads test runs, redis-server and redis-tools for the Redis study's test, the
#        aarch64 cross compiler and qemu-user for the aarch64 stage, dpkg-dev, pandoc, help2man
#        and lintian for the Debian packages' stage: tools/package.sh, gawk for the fragmentation
#        study's test)
# bench  what tools/bench.sh needs to build (fatal when missing) and what it wants (matplotlib,
#        the peer allocators: jemalloc, tcmalloc, mimalloc, scudo; the real-program studies'
#        programs: sqlite3, git, xz-utils, gawk, mawk, diffutils, jq, bc, redis-server and redis-tools,
#        the last two for the Redis study too; z3 for the smt case of -w issue12; the bench
#        runs without them)
# package what tools/package.sh needs to build the Debian packages (compilers, cmake, dpkg-dev,
#        pandoc and help2man for the manual pages) and to test them (lintian, python3 and
#        python3-matplotlib, which fitalloc-tools depends on)
#
# Without --if-missing: apt-get update and install them all (CI). With --if-missing: install
# only when some are missing, and only if we are root or have password-less sudo; otherwise
# name the apt-get line. Exit 1 when a needed package is missing and cannot be installed.
# On a machine without dpkg nothing is checked: the commands say what they miss themselves.
set -euo pipefail

build=(build-essential cmake ninja-build pkg-config)
peers=(libjemalloc2 libgoogle-perftools4 libmimalloc2.0 libclang-rt-14-dev)
case "${1:-}" in
test)
    needed=("${build[@]}" gcc g++ git binutils util-linux coreutils procps time file
        libasan8 libubsan1 libtsan2 clang-format clang-14 libclang-rt-14-dev valgrind python3
        python3-matplotlib "${peers[@]}" z3 redis-server redis-tools gcc-aarch64-linux-gnu
        g++-aarch64-linux-gnu qemu-user qemu-user-binfmt dpkg-dev pandoc help2man lintian gawk
        google-perftools)
    wanted=()
    ;;
bench)
    needed=("${build[@]}" python3 time)
    wanted=(python3-matplotlib "${peers[@]}" sqlite3 git xz-utils gawk mawk diffutils jq bc redis-server
        redis-tools z3)
    ;;
package)
    needed=("${build[@]}" git dpkg-dev pandoc help2man lintian python3 python3-matplotlib)
    wanted=()
    ;;
*)
    echo "usage: bash tools/deps.sh test|bench|package [--if-missing]" >&2
    exit 2
    ;;
esac
if_missing=0
[[ "${2:-}" == --if-missing ]] && if_missing=1

installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == *"ok installed"* ]]; }

as_root=()
((EUID == 0)) || as_root=(sudo -n)
may_install() { ((EUID == 0)) || sudo -n true 2>/dev/null; }

apt_install() {
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null &&
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -q --no-install-recommends "$@" </dev/null
}

if ((!if_missing)); then
    may_install || { echo "tools/deps.sh: not root and no password-less sudo" >&2; exit 1; }
    apt_install "${needed[@]}" "${wanted[@]}"
    exit
fi

command -v dpkg-query >/dev/null || exit 0
missing_needed=()
missing_wanted=()
for p in "${needed[@]}"; do installed "$p" || missing_needed+=("$p"); done
for p in "${wanted[@]}"; do installed "$p" || missing_wanted+=("$p"); done
missing=("${missing_needed[@]}" "${missing_wanted[@]}")
((${#missing[@]} == 0)) && exit 0

echo "tools/deps.sh: missing Debian packages: ${missing[*]}" >&2
if may_install && apt_install "${missing[@]}" >&2; then
    exit 0
fi
# The wanted ones may also fail alone (e.g. an old release without libmimalloc2.0).
if ((${#missing_needed[@]} > 0)) && may_install && apt_install "${missing_needed[@]}" >&2; then
    missing_needed=()
fi
((${#missing_needed[@]} == 0)) && exit 0
echo "tools/deps.sh: install them with: sudo apt-get install ${missing_needed[*]}" >&2
exit 1
