#!/usr/bin/env bash
# check_layers.sh LIB... - the layer rule of harness/ (docs/architecture.md): given the layers' static
# libraries bottom first (libhb_core.a ... libhb_cli.a), fail when an object of one library uses a
# symbol that only a library above it defines (an upward call: the link, top layer first, would then
# depend on what happened to be pulled in before). Prints each such use as "lib: object uses symbol
# (defined in lib)". Exit 0 when there is none.
set -euo pipefail
declare -A owner
libs=("$@")
for lib in "${libs[@]}"; do
  while read -r sym; do owner[$sym]=$lib; done < <(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF==3 && $2 ~ /[TDRBCVW]/ {print $3}')
done
bad=0
below=""
for lib in "${libs[@]}"; do
  below="$below $lib"
  obj=""
  while read -r line; do
    case "$line" in
      *:) obj=${line%:}; continue ;;
    esac
    sym=${line##* }
    def=${owner[$sym]:-}
    [ -z "$def" ] && continue                  # the C library, jansson, OpenBLAS ...
    case " $below " in *" $def "*) continue ;; esac
    echo "check_layers: $(basename "$lib"): $obj uses $sym, defined in $(basename "$def") (a layer above)" >&2
    bad=1
  done < <(nm -u "$lib" 2>/dev/null | awk 'NF==1 && /:$/ {print; next} NF==2 {print $2}')
done
exit $bad
