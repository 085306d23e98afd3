#!/usr/bin/env bash
# tools/gate_map.sh [--map FILE] [--backends LIST] PATH... | -
#
# The reader of tools/gate_map.txt (the map from source paths to the backends and op families they
# affect; its header states the format and the conservative default). Given the paths a diff changes
# (arguments, or one a line on stdin with "-"; `git diff --name-only --no-renames BASE HEAD`), and the
# backends a gate runs (--backends, comma-separated, e.g. cpu-ref,cpu or opencl:0:0; default: the
# map's list), prints tab-separated lines:
#   path    PATH  RULE  BACKENDS  FAMILIES   per path: the rule that decided it (its glob, or
#                                            "(default)"), and what it touches ("-": nothing measured)
#   first   BACKENDS  FAMILIES               the case groups the diff touches, to run first
#   others  BACKENDS  FAMILIES               the rest of the gate's cases, to run after
#   outside BACKEND   FAMILIES               touched, but a backend the gate does not run
# BACKENDS of first/others is a comma list of the gate's backends that share the same FAMILIES;
# FAMILIES is a comma list in the map's order, or "*" for every family (hybench run: no --op). A
# backend instance (opencl:0:0) is looked up by its type (opencl); a backend the map does not list is
# touched by "*" rules only. Used by tools/gate.sh; tested by tests/check_gate_map.sh.
# Exit: 0; 2 usage, or a map line that cannot be read (file and line named).
set -u -f   # -f: the map's globs and "*" are never expanded against files
HERE=$(cd "$(dirname "$0")" && pwd)
MAP=$HERE/gate_map.txt
GATE_BK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --map) MAP=${2:?--map wants a file}; shift 2;;
    --backends) GATE_BK=${2:?--backends wants a list}; shift 2;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    --) shift; break;;
    -) break;;
    -*) echo "gate_map.sh: unknown option $1" >&2; exit 2;;
    *) break;;
  esac
done
[ -r "$MAP" ] || { echo "gate_map.sh: cannot read the map $MAP" >&2; exit 2; }

# ---- the map: universes and rules, checked ----
UB=() UF=() GLOB=() RBK=() RFAM=()
in_list() { local x=$1; shift; local y; for y in "$@"; do [ "$x" = "$y" ] && return 0; done; return 1; }
ln=0
while IFS= read -r line || [ -n "$line" ]; do
  ln=$((ln + 1))
  line=${line%%#*}
  read -r -a f <<< "$line"
  [ ${#f[@]} -eq 0 ] && continue
  case "${f[0]}" in
    backends:) UB=("${f[@]:1}"); continue;;
    families:) UF=("${f[@]:1}"); continue;;
  esac
  [ ${#f[@]} -eq 3 ] || { echo "gate_map.sh: $MAP:$ln: wants GLOB BACKENDS FAMILIES, got ${#f[@]} fields" >&2; exit 2; }
  [ ${#UB[@]} -gt 0 ] && [ ${#UF[@]} -gt 0 ] || { echo "gate_map.sh: $MAP:$ln: a rule before the backends: and families: lines" >&2; exit 2; }
  if [ "${f[1]}" = - ] || [ "${f[2]}" = - ]; then
    [ "${f[1]}" = - ] && [ "${f[2]}" = - ] || { echo "gate_map.sh: $MAP:$ln: '-' (nothing measured) goes in both fields" >&2; exit 2; }
  else
    for b in ${f[1]//,/ }; do [ "$b" = '*' ] || in_list "$b" "${UB[@]}" || { echo "gate_map.sh: $MAP:$ln: unknown backend \"$b\" (backends: ${UB[*]})" >&2; exit 2; }; done
    for x in ${f[2]//,/ }; do [ "$x" = '*' ] || in_list "$x" "${UF[@]}" || { echo "gate_map.sh: $MAP:$ln: unknown family \"$x\" (families: ${UF[*]})" >&2; exit 2; }; done
  fi
  GLOB+=("${f[0]}"); RBK+=("${f[1]}"); RFAM+=("${f[2]}")
done < "$MAP"
[ ${#UB[@]} -gt 0 ] && [ ${#UF[@]} -gt 0 ] || { echo "gate_map.sh: $MAP: no backends: or families: line" >&2; exit 2; }

# the gate's backends (instances keep their names; the map knows their types)
if [ -n "$GATE_BK" ]; then read -r -a G <<< "${GATE_BK//,/ }"; else G=("${UB[@]}"); fi
declare -A TOUCH=() OUTSIDE=()
for b in "${G[@]}"; do TOUCH[$b]=""; done

# rule index deciding path $1 (-1: none, the default)
rule_of() {
  local i
  for ((i = 0; i < ${#GLOB[@]}; i++)); do
    # shellcheck disable=SC2053 # the glob is a pattern
    [[ $1 == ${GLOB[$i]} ]] && { echo "$i"; return; }
  done
  echo -1
}
add() { # backend-field family-field: mark what one path touches
  local bk=$1 fam=$2 b t x
  [ "$fam" = '*' ] && fam=$(IFS=,; echo "${UF[*]}")
  for b in "${G[@]}"; do
    t=${b%%:*}
    if [ "$bk" = '*' ] || in_list "$t" ${bk//,/ }; then
      for x in ${fam//,/ }; do case " ${TOUCH[$b]} " in *" $x "*) ;; *) TOUCH[$b]="${TOUCH[$b]} $x";; esac; done
    fi
  done
  [ "$bk" = '*' ] && return
  for t in ${bk//,/ }; do
    local run=0
    for b in "${G[@]}"; do [ "${b%%:*}" = "$t" ] && run=1; done
    if [ $run = 0 ]; then
      for x in ${fam//,/ }; do case " ${OUTSIDE[$t]:-} " in *" $x "*) ;; *) OUTSIDE[$t]="${OUTSIDE[$t]:-} $x";; esac; done
    fi
  done
}
paths=()
if [ "${1:-}" = - ]; then while IFS= read -r p; do [ -n "$p" ] && paths+=("$p"); done
else paths=("$@"); fi
for p in "${paths[@]}"; do
  i=$(rule_of "$p")
  if [ "$i" -lt 0 ]; then r="(default)" bk='*' fam='*'; else r=${GLOB[$i]} bk=${RBK[$i]} fam=${RFAM[$i]}; fi
  printf 'path\t%s\t%s\t%s\t%s\n' "$p" "$r" "$bk" "$fam"
  [ "$bk" = - ] || add "$bk" "$fam"
done

# per backend: touched families and the others, in the map's order; backends grouped by equal lists
ordered() { # "set" [invert]: the families of the set (or not in it), comma-joined, "*" for all
  local out=() x n=0
  for x in "${UF[@]}"; do
    case " $1 " in *" $x "*) [ "${2:-}" ] || out+=("$x");; *) [ "${2:-}" ] && out+=("$x");; esac
  done
  n=${#out[@]}
  if [ "$n" -eq ${#UF[@]} ]; then echo '*'; else (IFS=,; echo "${out[*]}"); fi
}
emit() { # kind invert
  local -A grp=()
  local keys=() b fl
  for b in "${G[@]}"; do
    fl=$(ordered "${TOUCH[$b]}" ${2:+inv})
    [ -z "$fl" ] && continue
    if [ -z "${grp[$fl]:-}" ]; then grp[$fl]=$b; keys+=("$fl"); else grp[$fl]="${grp[$fl]},$b"; fi
  done
  for fl in "${keys[@]}"; do printf '%s\t%s\t%s\n' "$1" "${grp[$fl]}" "$fl"; done
}
emit first
emit others inv
for t in "${UB[@]}"; do [ -n "${OUTSIDE[$t]:-}" ] && printf 'outside\t%s\t%s\n' "$t" "$(ordered "${OUTSIDE[$t]}")"; done
exit 0
