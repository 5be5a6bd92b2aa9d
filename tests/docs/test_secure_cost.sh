# The cost of secure mode quoted in docs/security.md and in the README's "Safety" paragraph is
# the README's bench run: the figures copied from its table ("Measured": fitalloc,
# fitalloc-secure and scudo, time and peak RSS against mimalloc) are the table's, and the ratios
# derived from them (secure mode against the default mode and against scudo) are those of the
# table's figures, to the digits quoted (plus 2 % for the rounding of the table itself).
set -euo pipefail
src=${FITALLOC_SOURCE_DIR:?FITALLOC_SOURCE_DIR is not set}
python3 - "$src/README.md" "$src/docs/security.md" <<'PY'
import re, sys

readme, security = (open(p).read() for p in sys.argv[1:3])
flat = lambda text: " ".join(text.split())
readme_flat, security_flat = flat(readme), flat(security)
bad = []

def row(label):
    """time and peak RSS of the README table's row whose first cell starts with label"""
    for line in readme.splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.sub(r"[*`]", "", cells[0]).split(" ")[0] == label:
            return float(cells[1]), float(cells[2])
    sys.exit(f"FAIL: no row '{label}' in the README's table")

fast, secure, scudo = row("fitalloc"), row("fitalloc-secure"), row("scudo")
derived = {
    "secure / default, time": secure[0] / fast[0],
    "secure / default, peak RSS": secure[1] / fast[1],
    "secure / scudo, time": secure[0] / scudo[0],
    "secure / scudo, peak RSS": secure[1] / scudo[1],
}

def close(claim, value):
    digits = len(claim.split(".")[1]) if "." in claim else 0
    return abs(float(claim) - value) <= 0.5 * 10 ** -digits + 0.02 * value

def expect(pattern, text, where, checks):
    m = re.search(pattern, text)
    if not m:
        bad.append(f"{where}: no match for {pattern!r}")
        return
    for group, (what, want, exact) in enumerate(checks, 1):
        got = m.group(group)
        ok = float(got) == want if exact else close(got, want)
        if not ok:
            bad.append(f"{where}: {what} is {got}, the README's table gives {want:.3f}")

num = r"([0-9]+(?:\.[0-9]+)?)"
expect(rf"fitalloc-secure \*\*{num} in time and {num} in peak RSS\*\*, fitalloc {num} and {num}:",
       security_flat, "docs/security.md",
       [("secure time", secure[0], True), ("secure peak RSS", secure[1], True),
        ("fitalloc time", fast[0], True), ("fitalloc peak RSS", fast[1], True)])
expect(rf"secure mode costs \*\*{num} times the default mode's time and {num} times its peak "
       rf"RSS\*\*, and runs at \*\*{num} times the time of scudo\*\* \(LLVM's hardened allocator, "
       rf"{num} and {num};", security_flat, "docs/security.md",
       [("time against the default mode", derived["secure / default, time"], False),
        ("peak RSS against the default mode", derived["secure / default, peak RSS"], False),
        ("time against scudo", derived["secure / scudo, time"], False),
        ("scudo time", scudo[0], True), ("scudo peak RSS", scudo[1], True)])
expect(rf"by default\), at {num} times its peak RSS", security_flat, "docs/security.md",
       [("peak RSS against scudo", derived["secure / scudo, peak RSS"], False)])
expect(rf"at about {num} times the time of LLVM's hardened allocator scudo \({num} times "
       rf"fitalloc's default mode, {num} times its peak RSS\)", readme_flat, "README.md",
       [("time against scudo", derived["secure / scudo, time"], False),
        ("time against the default mode", derived["secure / default, time"], False),
        ("peak RSS against the default mode", derived["secure / default, peak RSS"], False)])
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
if bad:
    sys.exit(1)
print("docs/secure_cost: ok (" + ", ".join(f"{k} {v:.2f}" for k, v in derived.items()) + ")")
PY
