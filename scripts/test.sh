#!/usr/bin/env bash
# Runs the project's tests from a clean checkout: installs what they need, checks formatting
# and lints, then runs the suite. CI calls it with no argument (see .ci/run): everything.
#
#   scripts/test.sh              everything, as CI runs it
#   scripts/test.sh --rust       fmt, machete, clippy and every Rust test (no UI checks)
#   scripts/test.sh --ui         the UI: build, API types and bindings current, typecheck,
#                                Vitest and the Playwright end-to-end specs
#   scripts/test.sh -p CRATE ... fmt, then clippy and the tests of those crates only; what
#                                follows `--` goes to the test runner: a name substring
#                                (`-- mcp`) or a nextest expression (`-- -E "test(mcp)"`)
#
# The parts keep CI's strictness (warnings are errors; the sandbox tests and the MCP tests fail,
# not skip, without Docker or the npm servers).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

part=all
crates=()
filter=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rust) part=rust ;;
    --ui) part=ui ;;
    -p)
      [ $# -ge 2 ] || usage
      part=crates
      crates+=("$2")
      shift
      ;;
    --)
      shift
      filter=("$@")
      break
      ;;
    -h | --help) usage ;;
    *)
      echo "unknown argument: $1" >&2
      usage
      ;;
  esac
  shift
done
if [ ${#filter[@]} -gt 0 ] && [ "$part" != crates ]; then
  echo "a test filter (after --) goes with -p CRATE" >&2
  usage
fi

disk_free() { echo "== disk: $(df -h --output=avail . | tail -1 | tr -d ' ') free $1"; }
disk_free "before set-up"
bash scripts/setup.sh

has_nextest() { cargo nextest --version >/dev/null 2>&1; }

# The crates whose tests start sandboxes on a real Docker daemon.
needs_docker() {
  case "$1" in
    tandem-e2e | tandem-sandbox | tandem-desktop) return 0 ;;
    *) return 1 ;;
  esac
}

docker_and_image() {
  echo "== Docker daemon and the sandbox image (the sandbox tests run conversations in it)"
  # A daemon without iptables or a bridge, started here when none answers (scripts/docker.sh);
  # the image is built offline from a debootstrap base with the tandem binary just built
  # (minutes the first time, cached after). The sandbox tests fail, not skip, without them.
  source scripts/docker.sh
  "$TANDEM_BIN" sandbox build > /dev/null
  export TANDEM_REQUIRE_DOCKER=1
}

# The end-to-end tests start the `tandem` binary. The workspace test build makes it with the
# features every test unifies; pointing TANDEM_BIN at that build keeps the tests from running
# `cargo build -p tandem-cli`, whose narrower feature set would rebuild most crates while the
# tests wait (minutes on a cold 2-core machine).
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
export TANDEM_BIN="$target_dir/debug/tandem"
# The MCP tests fail, not skip, without the npm MCP servers scripts/setup.sh installs.
export TANDEM_REQUIRE_MCP=1

workspace_test_build() {
  if has_nextest; then
    cargo nextest run --workspace --locked --no-run
  else
    cargo test --workspace --locked --no-run
  fi
}

ui_build() {
  echo "== UI build (the desktop app embeds ui/dist; its end-to-end test drives it)"
  npm run -s -w ui build
}

rust() {
  echo "== cargo fmt --check"
  cargo fmt --all --check

  echo "== cargo machete (no unused dependency entries)"
  cargo machete

  ui_build

  echo "== cargo clippy (warnings are errors)"
  cargo clippy --workspace --all-targets --locked -- -D warnings

  echo "== tests"
  workspace_test_build
  disk_free "after the test build"
  docker_and_image
  if has_nextest; then
    cargo nextest run --workspace --locked --no-fail-fast
  else
    cargo test --workspace --locked --no-fail-fast
  fi
}

ui() {
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
}

some_crates() {
  echo "== cargo fmt --check"
  cargo fmt --all --check
  local args=()
  local docker=0
  for c in "${crates[@]}"; do
    args+=(-p "$c")
    if needs_docker "$c"; then docker=1; fi
  done
  # tandem-server embeds ui/dist; a checkout that never built it gets it built once.
  [ -f ui/dist/index.html ] || ui_build
  echo "== cargo clippy ${args[*]} (warnings are errors)"
  cargo clippy "${args[@]}" --all-targets --locked -- -D warnings
  if [ "$docker" = 1 ]; then
    # The sandbox tests need the tandem binary the image carries, built as the workspace
    # test build makes it (see TANDEM_BIN above).
    workspace_test_build
    docker_and_image
  fi
  echo "== tests of ${crates[*]}"
  if has_nextest; then
    cargo nextest run "${args[@]}" --locked --no-fail-fast ${filter[@]+"${filter[@]}"}
  else
    cargo test "${args[@]}" --locked --no-fail-fast ${filter[@]+"${filter[@]}"}
  fi
}

case "$part" in
  all)
    rust
    ui
    ;;
  rust) rust ;;
  ui)
    ui_build
    # The bindings example, $TANDEM_BIN and the scripted LLM come from the workspace test build;
    # the desktop spec starts a sandbox too.
    workspace_test_build
    docker_and_image
    ui
    ;;
  crates) some_crates ;;
esac
