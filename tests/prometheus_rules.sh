#!/usr/bin/env bash
# The shipped alerting rules (packaging/prometheus): promtool check rules, then promtool test rules over
# their unit tests (each alert fires for the node it is about, and no other). Under a second; skipped
# (125) where promtool (Debian's prometheus package) is not installed.
set -euo pipefail
cd "$(dirname "$0")/../packaging/prometheus"
command -v promtool >/dev/null || { echo "prometheus_rules: no promtool (apt-get install prometheus)"; exit 125; }
promtool check rules cumemctl-alerts.yaml
promtool test rules cumemctl-alerts_test.yaml
