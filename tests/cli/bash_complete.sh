#!/usr/bin/env bash
# Prints what a bash completion script offers for a command line, one candidate a line: sources the
# script in a clean bash, splits the line into COMP_WORDS as readline does (at blanks, and '=' as a
# word of its own), sets COMP_CWORD to the last word and calls the function `complete -p` names.
#   bash_complete.sh SCRIPT 'cumemctl doctor --ch'
set -euo pipefail
script=$1 line=$2
exec bash --norc --noprofile -c '
  set -u
  source "$1"
  line=$2
  words=()
  read -ra raw <<<"$line"
  for w in "${raw[@]}"; do
    while [[ $w == *=* ]]; do words+=("${w%%=*}" "="); w=${w#*=}; done
    [[ -n $w ]] && words+=("$w")
  done
  [[ $line == *" " || $line == *= ]] && words+=("")
  COMP_WORDS=("${words[@]}")
  COMP_CWORD=$((${#words[@]} - 1))
  COMP_LINE=$line COMP_POINT=${#line}
  fn=$(complete -p "${words[0]}" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
  "$fn" "${words[0]}" "${words[COMP_CWORD]}" "${words[COMP_CWORD-1]:-}"
  printf "%s\n" "${COMPREPLY[@]}"
' bash_complete "$script" "$line"
