#!/usr/bin/env -S zsh -f
# Prints what zsh's completion offers for a command line, one candidate a line: drives an interactive
# `zsh -f -i` in a pseudo-terminal (zsh/zpty), loads the completion functions of FPATH_DIR with
# compinit, wraps compadd to print each candidate it is given, and presses Tab after the line. (The
# markers are typed split, '<<''END>>', so that the echo of the typed text does not match them.)
#   zsh_complete.zsh FPATH_DIR BIN_DIR 'cumemctl doctor --ch'
# Exit 0 with the candidates on stdout; 2 when the completion did not run to its end.
# With ZCOMPDUMP=FILE, compinit keeps its scan of the completion functions in FILE and later runs with
# the same FILE load it instead of scanning again (about 1.5 s a run: check_completion.py runs many).
zmodload zsh/zpty || exit 2
fdir=$1 bdir=$2 line=$3
dump_args=(-D)
[[ -n ${ZCOMPDUMP:-} ]] && dump_args=(-C -d ${(q)ZCOMPDUMP})
zpty z zsh -f -i
zpty -w z "fpath=(${(q)fdir} \$fpath); PATH=${(q)bdir}:\$PATH; autoload -U compinit; compinit -u ${dump_args[*]}"
zpty -w z "bindkey '^I' complete-word"
zpty -w z "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false"
zpty -w z "__mark() { print -r -- '<<''END>>' }; compprefuncs=(); comppostfuncs=(__mark)"
zpty -w z "compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi; local -a __hits; builtin compadd -A __hits \"\$@\"; (( \$#__hits )) && print -rl -- \"<<\"\"C>>\"\${^__hits}; return 0; }"
zpty -w -n z "$line"$'\t'
out=""
if ! zpty -r -m z out '*<<END>>*'; then
  print -r -- "completion did not finish: $out" >&2
  exit 2
fi
zpty -d z
for l in ${(f)out}; do
  [[ $l == *'<<C>>'* ]] && print -r -- ${${l##*<<C>>}%$'\r'}
done
exit 0
