# fitalloc --help, --version, and every subcommand's --help: exit 0 and a usage line naming
# the subcommand; no subcommand, or an unknown one, is a usage error (2).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

run_cmd --help
expect_rc 0 "fitalloc --help"
expect_in "$WORK/out" "usage: fitalloc" "fitalloc --help"
cp "$WORK/out" "$WORK/help"
for sub in run profile replay map compare stats where; do
    grep -Eq "^ +$sub +[a-z]" "$WORK/help" || fail "fitalloc --help does not list $sub"
    run_cmd "$sub" --help
    expect_rc 0 "fitalloc $sub --help"
    expect_in "$WORK/out" "usage: fitalloc $sub" "fitalloc $sub --help"
done

run_cmd --version
expect_rc 0 "fitalloc --version"
grep -Eq '^fitalloc [0-9]+\.[0-9]+\.[0-9]+$' "$WORK/out" || fail "--version printed '$(cat "$WORK/out")'"

run_cmd
expect_rc 2 "fitalloc without a subcommand"
expect_in "$WORK/err" "usage: fitalloc" "fitalloc without a subcommand"

run_cmd frobnicate
expect_rc 2 "an unknown subcommand"
expect_in "$WORK/err" "invalid choice: 'frobnicate'" "an unknown subcommand"
echo "command/help: ok"
