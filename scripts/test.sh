#!/usr/bin/env bash
# Runs every test of the project from a clean checkout: installs what the tests need, checks
# formatting and lints, then runs the whole test suite. CI calls this (see .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== cargo fmt --check"
cargo fmt --all --check

echo "== cargo machete (no unused dependency entries)"
cargo machete

echo "== UI build (the desktop app embeds ui/dist; its end-to-end test drives it)"
npm run -s -w ui build

echo "== cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== tests"
# The end-to-end tests start the `tandem` binary. The workspace test build makes it with the
# features every test unifies; pointing TANDEM_BIN at that build keeps the tests from running
# `cargo build -p tandem-cli`, whose narrower feature set would rebuild most crates while the
# tests wait (minutes on a cold 2-core machine).
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
export TANDEM_BIN="$target_dir/debug/tandem"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-run
else
  cargo test --workspace --locked --no-run
fi

echo "== Docker daemon and the sandbox image (the sandbox tests run conversations in it)"
# A daemon without iptables or a bridge, started here when none answers (scripts/docker.sh);
# the image is built offline from a debootstrap base with the tandem binary just built
# (minutes the first time, cached after). The sandbox tests fail, not skip, without them.
source scripts/docker.sh
"$TANDEM_BIN" sandbox build > /dev/null
export TANDEM_REQUIRE_DOCKER=1
# The MCP tests fail, not skip, without the npm MCP servers scripts/setup.sh installs.
export TANDEM_REQUIRE_MCP=1

if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
else
  cargo test --workspace --locked --no-fail-fast
fi

echo "== UI: API types and desktop command bindings current, typecheck, unit tests"
# check:api fails when ui/openapi.tandem.json differs from `$TANDEM_BIN openapi` (our server's
# document) or when generated.ts / tandem.gen.ts are stale against their documents.
npm run -w ui check:api
# The desktop's command bindings (ui/src/host/bindings.gen.ts) against the Tauri commands: the
# example was built with the tests above; --check fails when the committed file is stale.
"$target_dir/debug/examples/gen_bindings" --check
npm run -w ui typecheck && npm run -w ui test

echo "== UI end-to-end (tests/e2e-ui: Debian's chromium against tandem serve and the scripted LLM)"
# The specs start $TANDEM_BIN and, beside it, the testkit's scripted-llm (both made by the test
# build above) on 127.0.0.1, and serve the ui/dist built above. Screenshots and server logs go
# to target/e2e-ui/.
npm run -w tests/e2e-ui typecheck && npm run -w tests/e2e-ui test
