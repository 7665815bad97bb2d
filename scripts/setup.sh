#!/usr/bin/env bash
# Installs what building, running and testing Tandem need on Debian 12. Idempotent: it only
# installs what is missing. Needs root (or sudo) for apt.
set -euo pipefail

need_apt=()
command -v bash >/dev/null || need_apt+=(bash)
command -v cc >/dev/null || need_apt+=(build-essential)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
# The LLM tests make a self-signed certificate for a loopback HTTPS server.
command -v openssl >/dev/null || need_apt+=(openssl)
# A trace is opened in a network namespace with only loopback up (tandem-cli tests: unshare,
# nsenter, ip, curl).
command -v unshare >/dev/null || need_apt+=(util-linux)
command -v ip >/dev/null || need_apt+=(iproute2)
command -v curl >/dev/null || need_apt+=(curl)

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

# --- MCP servers for the MCP client's tests (tandem-mcp, tandem-e2e tests/mcp*.rs, benches/mcp.rs) ---
# The reference servers from npm, pinned, in a cache outside the repo; tests run them with
# `node <cache>/node_modules/@modelcontextprotocol/<server>/dist/index.js` (never `npx -y`, which
# would download at test time). Tests find the cache through TANDEM_MCP_SERVERS or this default.
TANDEM_MCP_SERVERS="${TANDEM_MCP_SERVERS:-$HOME/.cache/tandem/mcp-servers}"
MCP_SERVERS=("@modelcontextprotocol/server-everything@2026.8.31" "@modelcontextprotocol/server-filesystem@2026.8.31")
mcp_installed() {
  local spec name version
  for spec in "${MCP_SERVERS[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    grep -q "\"version\": \"$version\"" "$TANDEM_MCP_SERVERS/node_modules/$name/package.json" 2>/dev/null || return 1
  done
}
if ! mcp_installed; then
  if ! command -v npm >/dev/null; then
    echo "error: npm is not installed; the MCP test servers need node >= 20 with npm" >&2
    exit 1
  fi
  echo "== npm install ${MCP_SERVERS[*]} into $TANDEM_MCP_SERVERS"
  mkdir -p "$TANDEM_MCP_SERVERS"
  [ -f "$TANDEM_MCP_SERVERS/package.json" ] || echo '{"name": "tandem-mcp-servers", "private": true}' > "$TANDEM_MCP_SERVERS/package.json"
  npm install --prefix "$TANDEM_MCP_SERVERS" --no-audit --no-fund --save-exact "${MCP_SERVERS[@]}"
fi
# --- end MCP servers ---

# --- OpenHands compatibility peers (tandem-e2e compat tests and server benchmarks) ---
# The official OpenHands client and the upstream agent server 1.58.2 from PyPI, plus the openai
# client, in a Python 3.12 venv (every 1.x release needs Python >= 3.12; pyenv has 3.12.1).
# Installed as in ../shared/openhands/anchor-numbers.md: uv with certifi overridden to the newest
# release on the registry (agent-server pins a newer one). The upstream terminal needs tmux.
TANDEM_OH_VENV="${TANDEM_OH_VENV:-$HOME/.cache/tandem/oh-venv}"
OH_PKGS=(openhands-agent-server==1.58.2 openhands-sdk==1.58.2 openhands-tools==1.58.2
  openhands-workspace==1.58.2 openai==2.54.0)
if ! command -v tmux >/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "== apt-get install tmux"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tmux
fi
if ! "$TANDEM_OH_VENV/bin/python" -c 'import sys; from importlib.metadata import version as v; sys.exit(0 if (v("openhands-sdk"), v("openhands-agent-server"), v("openai")) == ("1.58.2", "1.58.2", "2.54.0") else 1)' 2>/dev/null; then
  PY312=""
  for c in "${TANDEM_PY312:-}" "$(command -v pyenv >/dev/null && echo "$(pyenv root)/versions/3.12.1/bin/python3")" "$(command -v python3.12 || true)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then PY312="$c"; break; fi
  done
  if [ -z "$PY312" ]; then
    echo "error: the OpenHands compatibility venv needs Python 3.12 (set TANDEM_PY312 to its python3)" >&2
    exit 1
  fi
  echo "== python venv $TANDEM_OH_VENV: ${OH_PKGS[*]}"
  mkdir -p "$(dirname "$TANDEM_OH_VENV")"
  [ -x "$TANDEM_OH_VENV/bin/python" ] || "$PY312" -m venv "$TANDEM_OH_VENV"
  "$TANDEM_OH_VENV/bin/pip" install -q --disable-pip-version-check uv
  overrides="$(mktemp)"
  echo 'certifi>=2026.10.18' > "$overrides"
  # Bytecode is compiled here: tests import these packages many times, and PYTHONDONTWRITEBYTECODE
  # may keep Python from caching it.
  "$TANDEM_OH_VENV/bin/uv" pip install -q --compile-bytecode --python "$TANDEM_OH_VENV/bin/python" --override "$overrides" "${OH_PKGS[@]}"
  rm -f "$overrides"
fi
# --- end OpenHands compatibility peers ---

# --- Desktop app (src-tauri, tandem-desktop): Tauri's system libraries, and what its tests use ---
# Tauri 2 on Linux links WebKitGTK 4.1, libsoup 3, GTK 3; the desktop tests run the app under
# Xvfb driven by tauri-driver + WebKitWebDriver, and the keyring against gnome-keyring inside a
# D-Bus session; the Desktop pane's tests serve an Xvfb display with x11vnc (xsetroot paints it).
# Only what is missing is installed.
desktop_pkgs=(libwebkit2gtk-4.1-dev libsoup-3.0-dev libgtk-3-dev librsvg2-dev
  libayatana-appindicator3-dev libxdo-dev pkg-config build-essential
  xvfb xauth webkit2gtk-driver dbus-x11 gnome-keyring libsecret-tools x11vnc x11-xserver-utils)
missing_desktop=()
for p in "${desktop_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing_desktop+=("$p")
done
if [ ${#missing_desktop[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "== apt-get install ${missing_desktop[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_desktop[@]}"
fi
if ! command -v tauri-driver >/dev/null || ! cargo install --list 2>/dev/null | grep -q "^tauri-driver v2\.1\.0:"; then
  echo "== cargo install tauri-driver 2.1.0"
  cargo install tauri-driver --locked --version 2.1.0
fi
# --- end desktop app ---

# --- Docker sandbox (sandbox-image/, tandem-sandbox): Debian's dockerd, which scripts/docker.sh
# starts when none runs, and debootstrap, with which sandbox-image/build-base.sh makes the base ---
missing_docker=()
command -v dockerd >/dev/null || [ -x /usr/sbin/dockerd ] || missing_docker+=(docker.io)
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || missing_docker+=(debootstrap)
if [ ${#missing_docker[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "== apt-get install ${missing_docker[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_docker[@]}"
fi
# --- end Docker sandbox ---

# --- cargo-machete: scripts/test.sh fails on a dependency entry no source uses (each one is
# compiled on every cold build) ---
if ! cargo install --list 2>/dev/null | grep -q "^cargo-machete v0\.9\.2:"; then
  echo "== cargo install cargo-machete 0.9.2"
  cargo install cargo-machete --locked --version 0.9.2
fi

# --- UI (ui/, tests/e2e-ui: npm workspaces): node modules, and chromium for the UI tests ---
# `npm ci` when node_modules is missing or older than package-lock.json (the lock changed); it
# installs every workspace, playwright-core of tests/e2e-ui included. Needs node >= 20.19 and npm
# (Debian's nodejs 18 is too old for Vite 8). The UI end-to-end tests and benchmarks drive
# Debian's chromium: playwright-core never downloads a browser.
if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "ok installed"; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "== apt-get install chromium"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
fi
(
  cd "$(dirname "$0")/.."
  if ! command -v npm >/dev/null; then
    echo "error: npm is not installed; the UI needs node >= 20.19 with npm" >&2
    exit 1
  fi
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "== npm ci (ui, tests/e2e-ui)"
    npm ci --no-audit --no-fund
  fi
)
# --- end UI ---
