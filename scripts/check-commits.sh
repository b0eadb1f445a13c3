#!/usr/bin/env bash
# Checks that commit subjects are at most 72 characters, so that `git log --oneline` and every tool
# that shows one line per commit stays readable; the reasons go in the body (CONTRIBUTING.md).
#   check-commits.sh [BASE]
# Checks every non-merge commit in BASE..HEAD and prints each subject over the limit, then exits 1.
# Without BASE it checks the commits from the one that added this script on: the history before it is
# exempt. Where that cannot be known (not a git checkout, a shallow clone, the script not yet
# committed) it says so and passes.
set -euo pipefail
limit=72
cd "$(dirname "$0")/.."
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "check-commits: not a git checkout: nothing to check"
  exit 0
fi
if [[ $(git rev-parse --is-shallow-repository) == true ]]; then
  echo "check-commits: a shallow clone: the commit that added this script may be missing; not checked"
  exit 0
fi
if (($# > 0)); then
  base=$1
  git rev-parse --verify --quiet "$base^{commit}" >/dev/null ||
    { echo "check-commits: no such commit: $base" >&2; exit 2; }
  range="$base..HEAD"
else
  added=$(git log --diff-filter=A --format=%H -- scripts/check-commits.sh | tail -1)
  if [[ -z $added ]]; then
    echo "check-commits: scripts/check-commits.sh is not committed yet: nothing to check"
    exit 0
  fi
  # The commit that added the script is checked too; a root commit has no parent to start after.
  if git rev-parse --verify --quiet "$added^" >/dev/null; then range="$(git rev-parse --short "$added")^..HEAD"; else range=HEAD; fi
fi
count=0
long=0
while IFS= read -r -d '' entry; do
  hash=${entry%% *}
  subject=${entry#* }
  count=$((count + 1))
  if ((${#subject} > limit)); then
    printf 'check-commits: %s: subject of %d characters (at most %d): %s\n' \
      "$hash" "${#subject}" "$limit" "$subject" >&2
    long=$((long + 1))
  fi
done < <(git log --no-merges -z --format='%h %s' "$range")
if ((long > 0)); then
  echo "check-commits: $long of $count commits in $range have a subject over $limit characters;" \
    "shorten them (git rebase -i, reword) and put the reasons in the body" >&2
  exit 1
fi
echo "check-commits: $count commits in $range, every subject at most $limit characters"
