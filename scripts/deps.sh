#!/usr/bin/env bash
# Installs the Debian packages Phalanx needs to build, test, fuzz and demo,
# then the dashboard's npm packages (web/package-lock.json, into
# web/node_modules). Idempotent and quiet when everything is present; runs
# `apt-get update` only when something is missing (a fresh machine's package
# lists may be empty).
set -euo pipefail

# One package per line; keep sorted.
packages=(
  busybox
  chromium
  clang
  crun
  cmake
  curl
  gcc
  gnuplot-nox
  haproxy
  iproute2
  jq
  libclang-rt-14-dev
  libcmocka-dev
  libcurl4-openssl-dev
  libgnutls28-dev
  libjansson-dev
  libjwt-dev
  libmicrohttpd-dev
  libmunge-dev
  libpq-dev
  libsqlite3-dev
  libyaml-dev
  make
  munge
  musl-tools
  ninja-build
  nodejs
  pkg-config
  postgresql
  prometheus
  python3
  sqlite3
  tmux
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Debian's nodejs comes without npm; another build of nodejs (NodeSource's)
# carries its own and conflicts with Debian's npm package.
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: run 'make deps' as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

# The dashboard's packages, exactly as locked (the build runs the same when
# they are missing; see web/assets.cmake).
web=$(dirname "$0")/../web
if [ ! -f "$web/node_modules/.package-lock.json" ] || [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "deps: npm ci (web/package-lock.json)"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
fi
