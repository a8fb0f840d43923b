#!/usr/bin/env bash
# What the container test (tests/test_container.py) needs to build and run the image on a
# machine with no registry: a Docker Engine (dockerd, containerd, runc and a client) and
# debootstrap, which makes the image's base from Debian's packages. Installs them with apt
# on Debian/Ubuntu as root when missing; elsewhere says in one line what is missing (the
# test then skips, saying why). Nothing is started here: the test starts a dockerd of its
# own, on a private socket and data root, and stops it.
#
# A package's install would start the system's Docker service where there is an init
# system, and that daemon's defaults change the host's network (a bridge, IP forwarding,
# the FORWARD policy): service starts are refused while apt installs (policy-rc.d).
set -euo pipefail

say() { echo "docker: $*" >&2; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  say "please install ${missing[*]} (the container test skips without them)"
  exit 0
fi

say "installing ${missing[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# scripts/setup-docker.sh: no service starts while it installs\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  own_policy=1
fi
cleanup() { [ -z "$own_policy" ] || rm -f "$policy"; }
trap cleanup EXIT

apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
  say "apt-get install ${missing[*]} failed"; exit 1; }
