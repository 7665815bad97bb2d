#!/usr/bin/env bash
# Sets Tandem up on a fresh Debian 12 machine and starts it.
#   scripts/run.sh            # the desktop app (with a display), else the same UI in a browser
#   scripts/run.sh --serve    # force the browser mode even with a display
#   scripts/run.sh --serve --no-auth   # ... without a session key (any local process may drive it)
# With a display ($DISPLAY or $WAYLAND_DISPLAY) it builds the UI and the desktop app
# (src-tauri, crate tandem-desktop) and launches it: the app runs the engine in-process on
# loopback. Without one it runs `tandem serve` on 127.0.0.1, which serves ui/dist at /ui/ and
# prints the URL to open in a browser. With no LLM provider configured (LLM_MODEL unset and no
# llm.model in $TANDEM_HOME/settings.json) both use the scripted demo LLM, clearly labelled as a
# demo: the desktop decides that itself; for `tandem serve`, `tandem settings --check-llm` asks
# the same settings loader.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=desktop
if [ "${1:-}" = "--serve" ]; then
  mode=serve
  shift
elif [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  mode=serve
fi

bash scripts/setup.sh

if ! command -v npm >/dev/null; then
  echo "error: npm (Node.js 20) is needed to build the UI" >&2
  exit 1
fi
[ -d node_modules ] || npm ci --no-audit --no-fund
echo "== building the UI (ui/dist)"
npm run -s -w ui build

target="${CARGO_TARGET_DIR:-target}"

if [ "$mode" = desktop ]; then
  echo "== building the desktop app (cargo build -p tandem-desktop)"
  cargo build --quiet -p tandem-desktop
  export WEBKIT_DISABLE_DMABUF_RENDERER="${WEBKIT_DISABLE_DMABUF_RENDERER:-1}"
  # With no LLM provider configured the app runs the scripted demo LLM and says so.
  exec "$target/debug/tandem-desktop" "$@"
fi

echo "== no display: serving the UI from the agent server instead (cargo build --bin tandem)"
cargo build --quiet --bin tandem
args=(serve)
# Exit 0: an LLM is configured; 1: none, so the demo plays the agent (`tandem serve` says so);
# else a bad settings file, which tandem has just named.
llm_status=0
"$target/debug/tandem" settings --check-llm || llm_status=$?
case "$llm_status" in
  0) ;;
  1) args+=(--llm demo) ;;
  *) exit "$llm_status" ;;
esac
# `tandem serve` binds 127.0.0.1, serves ui/dist at /ui/ and prints the URL to open, with the
# session key it makes for this run (`#key=…`) when it prints to a terminal: the key lives in
# the server's memory only, so the agent's commands cannot find it. `--no-auth` (passed through)
# runs without one, and says what that allows.
exec "$target/debug/tandem" "${args[@]}" "$@"
