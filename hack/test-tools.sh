#!/usr/bin/env bash
# Makes sure the programs the unit tests check vmbench against are on PATH: OpenSSH's ssh-keygen reads
# the keys the manager generates for runs (internal/platform). Installs Debian's openssh-client where it
# is missing, and fails (it never skips) when that is not possible; make test-unit then sets
# VMBENCH_REQUIRE_TOOLS=1 so that those tests fail instead of skipping when the program is absent.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

command -v ssh-keygen >/dev/null && exit 0
command -v apt-get >/dev/null || { log "no ssh-keygen and no apt-get: install OpenSSH's client yourself (the key tests need it)"; exit 1; }
step "openssh-client" apt_ensure openssh-client
command -v ssh-keygen >/dev/null || { log "apt-get installed openssh-client, yet ssh-keygen is not on PATH"; exit 1; }
