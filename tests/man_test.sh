#!/usr/bin/env bash
# Renders every manual page in the folder $1 with man's warnings on; fails on any warning, and when
# a page is missing its NAME, SYNOPSIS, EXIT STATUS or EXAMPLES section.
set -uo pipefail
dir=$1
pages=("$dir"/*.1)
((${#pages[@]} > 0)) && [[ -e ${pages[0]} ]] || { echo "no manual pages in $dir"; exit 1; }
failed=0
for page in "${pages[@]}"; do
  warnings=$(MANWIDTH=80 MANPAGER=cat LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
  if [[ -n $warnings ]]; then
    echo "FAIL $page:"
    echo "$warnings" | sed 's/^/    /'
    failed=1
    continue
  fi
  page_ok=1
  for section in NAME SYNOPSIS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    if ! grep -q "^\.SH \"\?$section\"\?\$" "$page"; then
      echo "FAIL $page: no $section section"
      page_ok=0 failed=1
    fi
  done
  ((page_ok)) && echo "ok   $page"
done
exit $failed
