# Sourced by the project's scripts, whose help is the comment block at their top.
# script_help <script> [status]: print that block (line 2 to the first line that is not a
# comment) without its "# ", then exit with status (0 by default).
script_help() {
    awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$1"
    exit "${2:-0}"
}
