#!/usr/bin/env bash
# Installs what building, running and testing Tandem need on Debian 12. Idempotent: it only
# installs what is missing. Needs root (or sudo) for apt.
set -euo pipefail

need_apt=()
command -v bash >/dev/null || need_apt+=(bash)
command -v cc >/dev/null || need_apt+=(build-essential)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)

if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "== apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! command -v cargo >/dev/null; then
  echo "error: cargo is not installed; install Rust (rustup) first" >&2
  exit 1
fi
