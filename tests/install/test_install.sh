#!/usr/bin/env bash
# Install the build into a temporary prefix and use it the two ways a consumer would:
#   (a) pkg-config: cc prog.c $(pkg-config --cflags --libs fitalloc)
#   (b) CMake:      find_package(fitalloc REQUIRED) + fitalloc::fitalloc / fitalloc::fitalloc_static
# Environment (set by tests/CMakeLists.txt): FITALLOC_BUILD_DIR, CC; optional CXX.
set -euo pipefail

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
step() { echo "--- $*"; }

: "${FITALLOC_BUILD_DIR:?FITALLOC_BUILD_DIR is not set}"
CC=${CC:-cc}
command -v cmake >/dev/null || fail "cmake not found"
command -v pkg-config >/dev/null || fail "pkg-config not found (apt-get install pkg-config)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

# ---------------------------------------------------------------------------
step "install into $prefix"
cmake --install "$FITALLOC_BUILD_DIR" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }

for h in fitalloc.h fitalloc-stats.h; do
    [[ -f "$prefix/include/$h" ]] || fail "header include/$h not installed"
done

pc=$(find "$prefix" -name fitalloc.pc -print -quit)
[[ -n "$pc" ]] || fail "fitalloc.pc not installed"
libdir=$(dirname "$(dirname "$pc")") # <libdir>/pkgconfig/fitalloc.pc
case "${libdir#"$prefix"/}" in
lib | lib64 | lib/*-linux-gnu*) ;;
*) fail "unexpected library directory $libdir" ;;
esac
[[ -f "$libdir/libfitalloc.a" ]] || fail "libfitalloc.a not installed in $libdir"
[[ -e "$libdir/libfitalloc.so" ]] || fail "libfitalloc.so (development link) not installed in $libdir"
[[ -e "$libdir/libfitalloc.so.0" ]] || fail "libfitalloc.so.0 (soname link) not installed in $libdir"
[[ -f "$libdir/cmake/fitalloc/fitallocConfig.cmake" ]] || fail "fitallocConfig.cmake not installed"
[[ -f "$libdir/cmake/fitalloc/fitallocConfigVersion.cmake" ]] ||
    fail "fitallocConfigVersion.cmake not installed"
soname=$(objdump -p "$libdir/libfitalloc.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
[[ "$soname" == "libfitalloc.so.0" ]] || fail "SONAME is '$soname', expected libfitalloc.so.0"
# Secure mode's library beside it, with its pkg-config file and CMake target.
[[ -e "$libdir/libfitalloc-secure.so.0" ]] || fail "libfitalloc-secure.so.0 not installed in $libdir"
[[ -e "$libdir/libfitalloc-secure.so" ]] || fail "libfitalloc-secure.so not installed in $libdir"
grep -qx 'Libs: -L${libdir} -lfitalloc-secure' "$libdir/pkgconfig/fitalloc-secure.pc" ||
    fail "fitalloc-secure.pc not installed, or it does not link -lfitalloc-secure"
grep -q 'fitalloc::fitalloc_secure' "$libdir"/cmake/fitalloc/fitallocTargets*.cmake ||
    fail "the CMake package has no fitalloc::fitalloc_secure target"

# The fitalloc command (docs/command.md) finds the installed library by itself.
step "bin/fitalloc"
[[ -x "$prefix/bin/fitalloc" ]] || fail "bin/fitalloc not installed"
cmd_out=$(env -u FITALLOC_LIB -u FITALLOC_REPLAY "$prefix/bin/fitalloc" --help 2>&1) ||
    fail "fitalloc --help failed: $cmd_out"
[[ "$cmd_out" == "usage: fitalloc"* ]] || fail "fitalloc --help printed: $cmd_out"
cmd_out=$(env -u FITALLOC_LIB -u FITALLOC_REPLAY "$prefix/bin/fitalloc" where 2>&1) ||
    fail "fitalloc where failed: $cmd_out"
cmd_lib=$(sed -n 's/^library: //p' <<<"$cmd_out")
[[ "$(realpath "$cmd_lib")" == "$(realpath "$libdir")"/libfitalloc.so* ]] ||
    fail "the installed fitalloc uses '$cmd_lib', not the library in $libdir"
env -u FITALLOC_LIB -u FITALLOC_REPLAY "$prefix/bin/fitalloc" run -- true ||
    fail "fitalloc run -- true failed"
cmd_out=$(env -u FITALLOC_LIB -u FITALLOC_REPLAY "$prefix/bin/fitalloc" run --stats -- true 2>&1) ||
    fail "fitalloc run --stats -- true failed: $cmd_out"
[[ "$cmd_out" == *"fitalloc: statistics"* ]] || fail "fitalloc run --stats -- true: $cmd_out"
echo "bin/fitalloc: runs programs with $cmd_lib"

# The consumer project (main.c, CMakeLists.txt), as a user of the package would write it.
consumer=$(cd "$(dirname "${BASH_SOURCE[0]}")/consumer" && pwd)

# check_run <what> <binary> [env...]: runs it, checks exit 0 and the expected line,
# and that it loads libfitalloc from the installed tree when linked dynamically.
check_run() {
    local what=$1 bin=$2
    shift 2
    local out rc=0
    out=$(env "$@" "$bin" 2>&1) || rc=$?
    [[ $rc -eq 0 ]] || fail "$what: program exited with $rc: $out"
    [[ "$out" == "fitalloc ok $version" ]] ||
        fail "$what: output '$out', expected 'fitalloc ok $version'"
    echo "$what: $out"
}

# ---------------------------------------------------------------------------
step "(a) pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists fitalloc || fail "pkg-config does not find fitalloc in $PKG_CONFIG_PATH"
version=$(pkg-config --modversion fitalloc)
[[ -n "$version" ]] || fail "pkg-config --modversion fitalloc is empty"
flags=$(pkg-config --cflags --libs fitalloc) || fail "pkg-config --cflags --libs fitalloc failed"
echo "pkg-config: version $version, flags: $flags"
[[ "$flags" == *-lfitalloc* ]] || fail "pkg-config --libs lacks -lfitalloc: $flags"
incdir=$(pkg-config --variable=includedir fitalloc)
[[ -f "$incdir/fitalloc.h" ]] || fail "pkg-config includedir '$incdir' has no fitalloc.h"
pclibdir=$(pkg-config --variable=libdir fitalloc)
[[ -e "$pclibdir/libfitalloc.so" ]] || fail "pkg-config libdir '$pclibdir' has no libfitalloc.so"

# shellcheck disable=SC2086 # the flags are meant to be split
"$CC" -o "$tmp/pc_prog" "$consumer/main.c" $flags >"$tmp/cc.log" 2>&1 ||
    { cat "$tmp/cc.log" >&2; fail "compiling with pkg-config flags failed"; }
check_run "pkg-config build" "$tmp/pc_prog" LD_LIBRARY_PATH="$libdir"
loaded=$(LD_LIBRARY_PATH="$libdir" ldd "$tmp/pc_prog" | awk '$1 ~ /^libfitalloc/ { print $3 }')
[[ "$(realpath "$loaded")" == "$(realpath "$libdir")"/* ]] ||
    fail "pkg-config build loads libfitalloc from '$loaded', not from $libdir"

# Static link: libfitalloc.a plus the Libs.private of pkg-config --static.
static_libs=$(pkg-config --static --libs-only-l fitalloc) || fail "pkg-config --static failed"
static_libs=${static_libs//-lfitalloc/}
# shellcheck disable=SC2086 # the flags are meant to be split
"$CC" -o "$tmp/pc_static" "$consumer/main.c" $(pkg-config --cflags fitalloc) \
    "$libdir/libfitalloc.a" $static_libs >"$tmp/cc.log" 2>&1 ||
    { cat "$tmp/cc.log" >&2; fail "static link with pkg-config --static flags ($static_libs) failed"; }
check_run "pkg-config static build" "$tmp/pc_static"

# ---------------------------------------------------------------------------
step "(b) CMake find_package"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$consumer" -B "$tmp/consumer" "${gen[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release \
    >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log" >&2; fail "configuring the find_package(fitalloc) project failed"; }
grep -q "fitalloc_DIR:PATH=$libdir/cmake/fitalloc" "$tmp/consumer/CMakeCache.txt" ||
    fail "find_package(fitalloc) did not pick the installed package: $(grep fitalloc_DIR "$tmp/consumer/CMakeCache.txt")"
cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log" >&2; fail "building the find_package(fitalloc) project failed"; }

# No LD_LIBRARY_PATH: CMake's build RPATH must point at the installed library.
check_run "CMake fitalloc::fitalloc" "$tmp/consumer/consumer_shared"
loaded=$(ldd "$tmp/consumer/consumer_shared" | awk '$1 ~ /^libfitalloc/ { print $3 }')
[[ "$(realpath "$loaded")" == "$(realpath "$libdir")"/* ]] ||
    fail "fitalloc::fitalloc build loads libfitalloc from '$loaded', not from $libdir"
check_run "CMake fitalloc::fitalloc_static" "$tmp/consumer/consumer_static"
ldd "$tmp/consumer/consumer_static" >"$tmp/ldd_static.txt" 2>&1 || true
if grep -q libfitalloc "$tmp/ldd_static.txt"; then
    fail "fitalloc::fitalloc_static build loads libfitalloc.so"
fi

echo "install test passed"
