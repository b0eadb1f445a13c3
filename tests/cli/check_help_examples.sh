#!/usr/bin/env bash
# Every example at the end of a command's --help is a command line that parses: run with no driver
# (--libcuda /nonexistent), none may be a usage error (exit 2). sudo, a launcher before cumemctl (srun,
# mpirun with their options: the line runs as a PMIx rank would), `source <(...)` and redirections are
# left out of the line; fleet's
# examples need reports, and are only parsed for their options; an example's folder that this machine
# lacks (/shared/run), named in the error, is not the example's fault. ctest: help-examples (1 s).
#   check_help_examples.sh CUMEMCTL
set -uo pipefail
cumemctl=$1
fail=0
for command in $("$cumemctl" --help | awk '/^Commands:/{on=1; next} /^$/{on=0} on {print $1}'); do
  examples=$("$cumemctl" "$command" --help | awk '/^Examples:/{on=1; next} /^$/{on=0} on' | sed 's/^ *//')
  [[ -n $examples ]] || { echo "no examples in cumemctl $command --help"; fail=1; continue; }
  "$cumemctl" "$command" --help | tail -1 | grep -q '^Global options' || { echo "$command: no global options line"; fail=1; }
  while IFS= read -r line; do
    line=${line%%   (*}                    # the remark after the command
    line=${line#sudo }
    if [[ $line == "source <("*")" ]]; then line=${line#"source <("}; line=${line%")"}; fi
    # A launcher's line runs as one of its ranks would: PMIx named (a library that is not there, so
    # nothing is reached).
    launched=()
    if [[ $line == srun\ * || $line == mpirun\ * ]] && [[ $line == *" cumemctl "* ]]; then
      line="cumemctl ${line#* cumemctl }"
      launched=(PMIX_NAMESPACE=help-examples PMIX_RANK=0 CUMEMCTL_LIBPMIX=/nonexistent)
    fi
    line=${line%% > *}; line=${line%% | *}
    read -r -a words <<<"$line"
    [[ ${words[0]} == cumemctl ]] || { echo "not a cumemctl line: $line"; fail=1; continue; }
    if [[ $command == fleet ]]; then words+=(/dev/null); fi
    env "${launched[@]}" "$cumemctl" --libcuda /nonexistent "${words[@]:1}" >/dev/null 2>"${TMPDIR:-/tmp}/help-example.err"
    rc=$?
    missing=0
    for word in "${words[@]}"; do
      [[ $word == /* && ! -e $word ]] && grep -qF -- "$word" "${TMPDIR:-/tmp}/help-example.err" && missing=1
    done
    if [[ $rc == 2 ]] && ((!missing)) && ! { [[ $command == fleet ]] && grep -q "/dev/null" "${TMPDIR:-/tmp}/help-example.err"; }; then
      echo "usage error from the example '$line':"; cat "${TMPDIR:-/tmp}/help-example.err"; fail=1
    fi
  done <<<"$examples"
done
exit $fail
