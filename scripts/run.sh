#!/usr/bin/env bash
# Builds and starts Tandem. Until the desktop app lands this runs the headless engine:
# with no LLM configured (LLM_MODEL unset and no ~/.tandem/settings.json) it uses the scripted
# demo LLM, in a scratch workspace, so every part of the loop can be seen without a key.
#   scripts/run.sh                      # demo task in a scratch workspace
#   scripts/run.sh "fix the failing test" --workspace ~/src/project --model openai/gpt-5
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --quiet --bin tandem
bin="${CARGO_TARGET_DIR:-target}/debug/tandem"

task="${1:-Show me around this workspace and leave a note in it}"
[ $# -gt 0 ] && shift
extra=("$@")
home="${TANDEM_HOME:-$HOME/.tandem}"
if [ -z "${LLM_MODEL:-}" ] && [ ! -f "$home/settings.json" ] && [[ " ${extra[*]-} " != *" --model "* ]]; then
  extra+=(--llm demo)
fi
if [[ " ${extra[*]-} " != *" --workspace "* ]]; then
  ws="${TMPDIR:-/tmp}/tandem-demo-workspace"
  mkdir -p "$ws"
  extra+=(--workspace "$ws")
fi
exec "$bin" run "$task" "${extra[@]}"
