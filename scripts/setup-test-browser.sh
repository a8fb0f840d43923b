#!/usr/bin/env bash
# The browser the status page's tests drive (tests/ui/test_ui.py): Debian's `chromium` and
# `chromium-driver` (chromedriver), for selenium. Test machines only: the Dockerfile runs
# scripts/setup-system.sh, never this. Installs them with apt on Debian/Ubuntu as root;
# elsewhere says in one line what to install. Quiet when all is there already.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || [ -x /usr/lib/chromium/chromedriver ] || missing+=(chromium-driver)

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${missing[*]} with apt-get (for the status page's browser tests)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

echo "setup: please install ${missing[*]} (Chromium and its chromedriver, for tests/ui/test_ui.py), then run make again" >&2
exit 1
