#!/usr/bin/env bash
# Makes sure headless Chromium is on PATH for the HTML report's browser test: installs Debian's
# chromium where it is missing, and fails (it never skips) when that is not possible.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

command -v chromium >/dev/null && exit 0
command -v apt-get >/dev/null || { log "no chromium and no apt-get: install Chromium yourself (the HTML test needs it)"; exit 1; }
step "chromium" apt_ensure chromium
command -v chromium >/dev/null || { log "apt-get installed chromium, yet it is not on PATH"; exit 1; }
