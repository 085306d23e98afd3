#!/bin/sh
# check_getenv.sh - the environment is read at the command-line boundary only (docs/environment.md):
# every getenv in kernels/ and harness/ outside harness/cli/ and harness/core/config.c must be listed
# as "allow: FILE VARIABLE" in docs/environment.md ("*" for a call whose name is not a literal).
# Prints each unlisted site and exits 1; 0 when none.
cd "$(dirname "$0")/.." || exit 2
set -f # the "*" of a non-literal name is a word, not a pattern
doc=docs/environment.md
[ -r $doc ] || { echo "check_getenv: $doc missing"; exit 2; }
allow=$(sed -n 's/^ *allow: \([^ ]*\) \([^ ]*\) *$/\1 \2/p' $doc)
bad=0
for f in $(grep -rl --include='*.c' --include='*.h' --include='*.cu' --include='*.cpp' 'getenv *(' kernels harness); do
    case $f in harness/cli/*|harness/core/config.c) continue ;; esac
    # each call: its literal name, or * when the argument is not a string literal
    for v in $(grep -v '^\s*\*\|^\s*/[*/]' "$f" | grep -o 'getenv *( *[^)]*)' | sed 's/getenv *( *"\([^"]*\)" *)/\1/; s/getenv *(.*)/*/'); do
        if ! printf '%s\n' "$allow" | grep -qxF "$f $v"; then
            echo "check_getenv: $f reads $v with getenv: read it at the command line into hb_config (core/config.h), or list it under \"Allowed reads\" in $doc"
            bad=1
        fi
    done
done
exit $bad
