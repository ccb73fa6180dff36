#!/usr/bin/env bash
# Makes sure the programs the unit tests check vmbench against are on PATH: OpenSSH's ssh-keygen reads
# the keys the manager generates for runs (internal/platform); Prometheus's promtool checks and
# unit-tests the chart's alerting rules (test/chart). Installs Debian's openssh-client and prometheus
# (which holds /usr/bin/promtool) where they are missing, and fails (it never skips) when that is not possible; make test-unit then sets
# VMBENCH_REQUIRE_TOOLS=1 so that those tests fail instead of skipping when the program is absent.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if ! command -v ssh-keygen >/dev/null; then
  command -v apt-get >/dev/null || { log "no ssh-keygen and no apt-get: install OpenSSH's client yourself (the key tests need it)"; exit 1; }
  step "openssh-client" apt_ensure openssh-client
  command -v ssh-keygen >/dev/null || { log "apt-get installed openssh-client, yet ssh-keygen is not on PATH"; exit 1; }
fi
if ! command -v promtool >/dev/null; then
  command -v apt-get >/dev/null || { log "no promtool and no apt-get: install Prometheus's promtool yourself (the alert rule tests need it)"; exit 1; }
  step "prometheus (promtool)" apt_ensure prometheus
  command -v promtool >/dev/null || { log "apt-get installed prometheus, yet promtool is not on PATH"; exit 1; }
fi
