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

# --- Python SDKs for the real-wire check (tandem-testkit tests/python_sdks.rs) ---
# The official openai and anthropic packages, pinned, in a venv outside the repo.
TANDEM_PY_VENV="${TANDEM_PY_VENV:-$HOME/.cache/tandem/py-venv}"
PY_SDKS=("openai==3.54.0" "anthropic==2.12.0")
if ! "$TANDEM_PY_VENV/bin/python" -c 'import openai, anthropic, sys; sys.exit(0 if (openai.__version__, anthropic.__version__) == ("3.54.0", "2.12.0") else 1)' 2>/dev/null; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "== apt-get install python3-venv"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
  fi
  echo "== python venv $TANDEM_PY_VENV: ${PY_SDKS[*]}"
  mkdir -p "$(dirname "$TANDEM_PY_VENV")"
  [ -x "$TANDEM_PY_VENV/bin/python" ] || python3 -m venv "$TANDEM_PY_VENV"
  "$TANDEM_PY_VENV/bin/pip" install -q --disable-pip-version-check "${PY_SDKS[@]}"
fi
# --- end Python SDKs ---

# --- UI (ui/, npm workspaces): node modules ---
# `npm ci` when node_modules is missing or older than package-lock.json (the lock changed).
# Needs node >= 20.19 and npm (Debian's nodejs 18 is too old for Vite 8).
(
  cd "$(dirname "$0")/.."
  if ! command -v npm >/dev/null; then
    echo "error: npm is not installed; the UI needs node >= 20.19 with npm" >&2
    exit 1
  fi
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "== npm ci (ui)"
    npm ci --no-audit --no-fund
  fi
)
# --- end UI ---
