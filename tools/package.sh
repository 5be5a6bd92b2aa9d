#!/usr/bin/env bash
# Debian packages of fitalloc:  bash tools/package.sh [--test]
#
# Builds build-deb/ (Release, prefix /usr, -DFITALLOC_DEB=ON, no tests) and makes the packages
# with CPack (cpack -G DEB, cmake/packaging.cmake) in build-deb/packages/: libfitalloc0 (the
# libraries, libfitalloc.so.0 and libfitalloc-secure.so.0), libfitalloc-dev (headers, static
# library, pkg-config and CMake files) and fitalloc-tools (the fitalloc command,
# fitalloc-replay). First installs the Debian packages it needs when they are missing
# (tools/deps.sh package: dpkg-dev, pandoc, help2man, lintian, ...), as root or with
# password-less sudo; otherwise it fails and names the apt-get line.
#
# --test then checks them, in about a minute: lintian (no error, no warning but the one
# cmake/packaging.cmake explains), install them, preload a real program from the installed path,
# compile against libfitalloc-dev with pkg-config and with CMake's find_package, run the
# installed fitalloc command, remove them.
#   - as root with CI set, or FITALLOC_DEB_INSTALL=system: on this machine, with dpkg; they are
#     purged at the end even when a check fails, and nothing of them may be left behind;
#   - otherwise, or FITALLOC_DEB_INSTALL=scratch: unpacked (dpkg -x) into a scratch root, and
#     the checks reach it with LD_LIBRARY_PATH, PKG_CONFIG_SYSROOT_DIR, CMAKE_PREFIX_PATH.
# /etc/ld.so.preload is never touched (README: "Whole machine"); the test checks it is unchanged.
# Exit status: 0 passed, 1 failed (a tool missing too), 77 skipped (the install on this machine
# cannot be done: not root, or the packages are already installed; the line says why).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/help.sh"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-deb"
packages=(libfitalloc0 libfitalloc-dev fitalloc-tools)

test=0
case "${1:-}" in
"") ;;
--test) test=1 ;;
-h | --help) script_help "${BASH_SOURCE[0]}" ;;
*) echo "usage: bash tools/package.sh [--test]" >&2 && exit 2 ;;
esac

fail() {
    echo "tools/package.sh: FAIL: $*" >&2
    exit 1
}
skip() {
    echo "tools/package.sh: skipped: $*"
    exit 77
}
step() { echo "--- $*"; }

# On a fresh Debian machine (as root or with password-less sudo) this installs what is missing.
bash "$root/tools/deps.sh" package --if-missing ||
    fail "the Debian packages it needs are missing (tools/deps.sh package names them above)"
for tool in cmake cpack ninja dpkg-deb dpkg-shlibdeps pandoc help2man gzip; do
    command -v "$tool" >/dev/null ||
        fail "$tool not found (apt-get install cmake ninja-build dpkg-dev pandoc help2man)"
done

# Dates in the packages (changelog, manual pages): the last commit's, so that the same commit
# gives the same files.
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]] && git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct)
    export SOURCE_DATE_EPOCH
fi

# ---------------------------------------------------------------------------
step "build $build and its packages"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DFITALLOC_DEB=ON -DFITALLOC_TESTS=OFF -DFITALLOC_MANPAGES=ON -DFITALLOC_SANITIZE= \
    -DFITALLOC_OVERRIDE=ON >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; fail "configuring $build failed"; }
rm -f "$build.configure.log"
cmake --build "$build" || fail "building $build failed"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB) >"$build/cpack.log" 2>&1 ||
    { cat "$build/cpack.log" >&2; fail "cpack -G DEB failed (log: build-deb/cpack.log)"; }
debs=()
for p in "${packages[@]}"; do
    deb=$(find "$build/packages" -maxdepth 1 -name "${p}_*.deb" -print -quit)
    [[ -n "$deb" ]] || fail "cpack made no ${p}_*.deb"
    debs+=("$deb")
done
for deb in "${debs[@]}"; do echo "${deb#"$root"/}"; done
((test)) || exit 0

# ---------------------------------------------------------------------------
command -v lintian >/dev/null || fail "lintian not found (apt-get install lintian)"
command -v pkg-config >/dev/null || fail "pkg-config not found (apt-get install pkg-config)"
[[ -x /usr/bin/python3 ]] || fail "/usr/bin/python3 not found: the installed command needs it"

mode=${FITALLOC_DEB_INSTALL:-auto}
if [[ "$mode" == auto ]]; then
    mode=scratch
    ((EUID == 0)) && [[ -n "${CI:-}" ]] && mode=system
fi
case "$mode" in
system) ((EUID == 0)) || skip "FITALLOC_DEB_INSTALL=system needs root" ;;
scratch) ;;
*) fail "FITALLOC_DEB_INSTALL must be auto, system or scratch, not '$mode'" ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-deb.XXXXXX")
installed=0
cleanup() {
    if ((installed)); then
        echo "--- removing the packages (dpkg --purge)"
        dpkg --purge "${packages[@]}" >"$tmp/purge.log" 2>&1 ||
            { cat "$tmp/purge.log" >&2; echo "tools/package.sh: dpkg --purge failed" >&2; }
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

step "lintian"
# Every error and warning fails, but the one cmake/packaging.cmake explains: these packages are
# not uploaded to Debian, so their changelog closes no "intent to package" bug.
lintian --fail-on error,warning --suppress-tags initial-upload-closes-no-bugs "${debs[@]}" \
    >"$tmp/lintian.log" 2>&1 || rc=$?
grep -v '^running with root privileges' "$tmp/lintian.log" || true
((${rc:-0} == 0)) || fail "lintian reports errors or warnings"

step "contents"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
lib="usr/lib/$multiarch"
expect() { # expect <package .deb> <path>...
    local deb=$1
    shift
    dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./||' >"$tmp/list"
    for path in "$@"; do
        grep -qx "$path" "$tmp/list" || fail "$(basename "$deb") lacks $path"
    done
}
expect "${debs[0]}" "$lib/libfitalloc.so.0" "$lib/libfitalloc-secure.so.0" \
    usr/share/doc/libfitalloc0/copyright
# ldconfig runs through dpkg's trigger, not from maintainer scripts (cmake/packaging.cmake).
dpkg-deb --ctrl-tarfile "${debs[0]}" | tar -t | sed 's|^\./||' >"$tmp/control"
grep -qx triggers "$tmp/control" || fail "libfitalloc0 has no triggers file"
[[ "$(dpkg-deb -I "${debs[0]}" triggers)" == "activate-noawait ldconfig" ]] ||
    fail "libfitalloc0's triggers: $(dpkg-deb -I "${debs[0]}" triggers)"
! grep -Eqx 'postinst|postrm|preinst|prerm' "$tmp/control" ||
    fail "libfitalloc0 has maintainer scripts: $(paste -sd ' ' "$tmp/control")"
expect "${debs[1]}" "$lib/libfitalloc.so" "$lib/libfitalloc.a" "$lib/pkgconfig/fitalloc.pc" \
    "$lib/libfitalloc-secure.so" "$lib/pkgconfig/fitalloc-secure.pc" \
    "$lib/cmake/fitalloc/fitallocConfig.cmake" usr/include/fitalloc.h usr/share/man/man3/fitalloc.3.gz
expect "${debs[2]}" usr/bin/fitalloc usr/bin/fitalloc-replay usr/share/man/man1/fitalloc.1.gz \
    usr/share/man/man1/fitalloc-replay.1.gz usr/share/fitalloc/python/fitalloc_cli/cli.py
[[ "$(dpkg-deb -f "${debs[2]}" Depends)" == *python3-matplotlib* ]] ||
    fail "fitalloc-tools does not depend on python3-matplotlib"

# Every path the packages hold, and which of them were there before (/usr, /usr/bin, ...).
for deb in "${debs[@]}"; do dpkg-deb -c "$deb"; done | awk '{ print $6 }' | sed 's|^\.||; s|/$||' |
    awk 'NF' | sort -u >"$tmp/paths"
preload_before=$(cat /etc/ld.so.preload 2>/dev/null || echo "(none)")

if [[ "$mode" == system ]]; then
    step "install on this machine (dpkg -i)"
    for p in "${packages[@]}"; do
        [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *installed* ]] &&
            skip "$p is already installed here: the test would replace and then remove it"
    done
    : >"$tmp/existed"
    while read -r path; do
        if [[ -e "$path" && ! -d "$path" ]]; then
            skip "$path exists already (fitalloc installed from source?)"
        elif [[ -e "$path" ]]; then
            echo "$path" >>"$tmp/existed"
        fi
    done <"$tmp/paths"
    installed=1
    dpkg -i "${debs[@]}" >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log" >&2; fail "dpkg -i failed (a dependency missing? python3-matplotlib)"; }
    r=""
else
    step "unpack into a scratch root (dpkg -x)"
    r="$tmp/root"
    for deb in "${debs[@]}"; do dpkg -x "$deb" "$r"; done
fi
libdir="$r/$lib"

# ---------------------------------------------------------------------------
step "a real program, preloaded by the installed path"
printf 'pear\napple\nfig\n' >"$tmp/fruit"
out=$(LD_PRELOAD="$libdir/libfitalloc.so.0" FITALLOC_STATS=1 sort "$tmp/fruit" 2>"$tmp/err") ||
    { cat "$tmp/err" >&2; fail "sort under LD_PRELOAD=$libdir/libfitalloc.so.0 failed"; }
[[ "$out" == $'apple\nfig\npear' ]] || fail "sort under fitalloc printed: $out"
grep -q "fitalloc: statistics" "$tmp/err" || fail "sort did not run on fitalloc: $(cat "$tmp/err")"
maps=$(LD_PRELOAD="$libdir/libfitalloc.so.0" cat /proc/self/maps)
[[ "$maps" == *"$(realpath "$libdir/libfitalloc.so.0")"* ]] ||
    fail "a preloaded program does not map $libdir/libfitalloc.so*"
echo "sort ran on $libdir/libfitalloc.so.0"
if [[ "$mode" == system ]]; then
    # By its soname alone: the dynamic loader's cache knows it (ldconfig ran).
    ldconfig -p | grep -q "libfitalloc.so.0 " || fail "libfitalloc.so.0 is not in the ld.so cache"
    out=$(LD_PRELOAD=libfitalloc.so.0 FITALLOC_STATS=1 sort "$tmp/fruit" 2>&1 >/dev/null)
    [[ "$out" == *"fitalloc: statistics"* ]] || fail "LD_PRELOAD=libfitalloc.so.0 did not work: $out"
    echo "LD_PRELOAD=libfitalloc.so.0 works too (ld.so cache)"
fi

# ---------------------------------------------------------------------------
consumer=$root/tests/install/consumer # main.c and CMakeLists.txt, as a user would write them
version=$(dpkg-deb -f "${debs[0]}" Version)
version=${version%-*}
# run_consumer <what> <binary> [env...]: prints "fitalloc ok <version>".
run_consumer() {
    local what=$1 bin=$2 out
    shift 2
    out=$(env "$@" "$bin" 2>&1) || fail "$what: the program failed: $out"
    [[ "$out" == "fitalloc ok $version" ]] || fail "$what: printed '$out'"
    echo "$what: $out"
}
# loads_from <binary> [env...]: fails unless the program loads libfitalloc from $libdir.
loads_from() {
    local bin=$1 loaded
    shift
    loaded=$(env "$@" ldd "$bin" | awk '$1 ~ /^libfitalloc/ { print $3 }')
    [[ -n "$loaded" && "$(realpath "$loaded")" == "$(realpath "$libdir")"/* ]] ||
        fail "$bin loads libfitalloc from '$loaded', not from $libdir"
}
run_env=()
[[ "$mode" == scratch ]] && run_env=(LD_LIBRARY_PATH="$libdir")

step "libfitalloc-dev with pkg-config"
pc_env=()
[[ "$mode" == scratch ]] && pc_env=(PKG_CONFIG_PATH="$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$r")
[[ "$(env "${pc_env[@]}" pkg-config --modversion fitalloc)" == "$version" ]] ||
    fail "pkg-config --modversion fitalloc is not $version"
flags=$(env "${pc_env[@]}" pkg-config --cflags --libs fitalloc) || fail "pkg-config fitalloc failed"
echo "pkg-config --cflags --libs fitalloc: $flags"
# shellcheck disable=SC2086 # the flags are meant to be split
cc -o "$tmp/pc_prog" "$consumer/main.c" $flags >"$tmp/cc.log" 2>&1 ||
    { cat "$tmp/cc.log" >&2; fail "cc with pkg-config's flags failed"; }
run_consumer "pkg-config build" "$tmp/pc_prog" "${run_env[@]}"
loads_from "$tmp/pc_prog" "${run_env[@]}"

step "libfitalloc-dev with CMake's find_package"
cmake_args=()
[[ "$mode" == scratch ]] && cmake_args=(-DCMAKE_PREFIX_PATH="$r/usr")
cmake -S "$consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" \
    >"$tmp/consumer.log" 2>&1 && cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 ||
    { cat "$tmp/consumer.log" >&2; fail "the find_package(fitalloc) project failed"; }
found=$(sed -n 's/^fitalloc_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[[ "$found" == "$libdir/cmake/fitalloc" ]] || fail "find_package(fitalloc) found '$found'"
run_consumer "CMake fitalloc::fitalloc" "$tmp/consumer/consumer_shared" "${run_env[@]}"
loads_from "$tmp/consumer/consumer_shared" "${run_env[@]}"
run_consumer "CMake fitalloc::fitalloc_static" "$tmp/consumer/consumer_static"

# ---------------------------------------------------------------------------
step "fitalloc-tools: the installed fitalloc command"
fitalloc=(env -u FITALLOC_LIB -u FITALLOC_REPLAY "$r/usr/bin/fitalloc")
[[ "$(head -n 1 "$r/usr/bin/fitalloc")" == "#!/usr/bin/python3" ]] ||
    fail "/usr/bin/fitalloc does not start with #!/usr/bin/python3"
where=$("${fitalloc[@]}" where 2>&1) || fail "fitalloc where failed: $where"
used=$(sed -n 's/^library: //p' <<<"$where")
[[ -n "$used" && "$(realpath "$used")" == "$(realpath "$libdir")"/libfitalloc.so* ]] ||
    fail "the installed fitalloc uses the library '$used', not the one in $libdir"
used=$(sed -n 's/^replay: //p' <<<"$where")
[[ -n "$used" && "$(realpath "$used")" == "$(realpath "$r/usr/bin/fitalloc-replay")" ]] ||
    fail "the installed fitalloc uses '$used', not $r/usr/bin/fitalloc-replay"
out=$("${fitalloc[@]}" run --stats -- sort "$tmp/fruit" 2>&1) || fail "fitalloc run failed: $out"
[[ "$out" == *"fitalloc: statistics"* && "$out" == *pear* ]] || fail "fitalloc run --stats: $out"
"${fitalloc[@]}" run --trace "$tmp/sort.fat" -- sort "$tmp/fruit" >/dev/null ||
    fail "fitalloc run --trace failed"
"${fitalloc[@]}" replay "$tmp/sort.fat" --policy first,best >"$tmp/replay" 2>&1 ||
    { cat "$tmp/replay" >&2; fail "fitalloc replay (through the installed fitalloc-replay) failed"; }
grep -q '^best ' "$tmp/replay" || fail "fitalloc replay printed: $(cat "$tmp/replay")"
echo "fitalloc run and fitalloc replay work from $r/usr/bin"
if command -v man >/dev/null; then
    for page in man1/fitalloc.1 man1/fitalloc-replay.1 man3/fitalloc.3; do
        out=$(man --warnings -l "$r/usr/share/man/$page.gz" 2>&1 >/dev/null) ||
            fail "man $page failed: $out"
        [[ -z "$out" ]] || fail "man $page: $out"
    done
    echo "manual pages: fitalloc(1), fitalloc-replay(1), fitalloc(3) render without warnings"
fi

# ---------------------------------------------------------------------------
if [[ "$mode" == system ]]; then
    step "remove (dpkg --purge) and look for leftovers"
    installed=0
    dpkg --purge "${packages[@]}" >"$tmp/purge.log" 2>&1 ||
        { cat "$tmp/purge.log" >&2; fail "dpkg --purge failed"; }
    for p in "${packages[@]}"; do
        [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != *installed* ]] ||
            fail "$p is still installed"
    done
    while read -r path; do
        if [[ -e "$path" || -L "$path" ]] && ! grep -qx "$path" "$tmp/existed"; then
            fail "$path is left after dpkg --purge"
        fi
    done <"$tmp/paths"
    ! ldconfig -p | grep -q libfitalloc || fail "libfitalloc is still in the ld.so cache"
    echo "nothing of the packages is left"
fi
[[ "$(cat /etc/ld.so.preload 2>/dev/null || echo "(none)")" == "$preload_before" ]] ||
    fail "/etc/ld.so.preload changed"
echo "package test passed ($mode install)"
