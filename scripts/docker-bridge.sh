#!/usr/bin/env bash
# A second Docker daemon WITH a bridge network, for the sandbox's bridge test (the project's own
# daemon, scripts/docker.sh, runs with --bridge=none). No iptables and no IP forwarding: the
# containers reach the host through the bridge's gateway address and the host reaches them
# through published ports (Docker's userland proxy); nothing leaves the machine. The sandbox
# image is copied over from the main daemon.
#
#   source scripts/docker-bridge.sh    exports TANDEM_BRIDGE_DOCKER_HOST (DOCKER_HOST untouched)
#
# Needs root, dockerd, and the sandbox image (TANDEM_SANDBOX_IMAGE, default tandem-sandbox:latest)
# on the main daemon ($DOCKER_HOST or scripts/docker.sh's). TANDEM_BRIDGE_DOCKER_SOCK /
# TANDEM_BRIDGE_DOCKER_ROOT move its socket and data; TANDEM_BRIDGE_NAME its bridge (default
# tandem-br0, 172.31.250.1/24). Fails with status 3 when no bridge can run on this machine (no
# root, no CAP_NET_ADMIN, no dockerd, or a bridged dockerd that does not come up), 1 otherwise.

__tandem_docker_bridge() {
  local sock="${TANDEM_BRIDGE_DOCKER_SOCK:-/run/tandem-docker-bridge.sock}"
  local root="${TANDEM_BRIDGE_DOCKER_ROOT:-/var/lib/tandem-docker-bridge}"
  local br="${TANDEM_BRIDGE_NAME:-tandem-br0}"
  local cidr="${TANDEM_BRIDGE_CIDR:-172.31.250.1/24}"
  local pidfile="${sock%.sock}.pid"
  local log="$root/dockerd.log"
  local main="${DOCKER_HOST:-unix:///run/tandem-docker.sock}"
  local h="unix://$sock"
  local image="${TANDEM_SANDBOX_IMAGE:-tandem-sandbox:latest}"

  __answers() { DOCKER_HOST="$1" timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }
  if ! __answers "$h"; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "error: starting the bridge daemon needs root" >&2
      return 3
    fi
    if ! command -v dockerd >/dev/null 2>&1; then
      echo "error: dockerd is not installed" >&2
      return 3
    fi
    if ! ip link show "$br" >/dev/null 2>&1; then
      ip link add "$br" type bridge || { echo "error: cannot create the bridge $br (needs CAP_NET_ADMIN)" >&2; return 3; }
      ip addr add "$cidr" dev "$br" || return 3
      ip link set "$br" up || return 3
    fi
    mkdir -p "$root/data" "$root/exec"
    echo "== starting a bridged dockerd on $h (bridge $br, log: $log)" >&2
    setsid nohup dockerd --iptables=false --ip-forward=false --bridge="$br" \
      --data-root "$root/data" --exec-root "$root/exec" \
      -H "$h" --pidfile "$pidfile" >>"$log" 2>&1 </dev/null &
    local i
    for ((i = 0; i < 120; i++)); do
      __answers "$h" && break
      sleep 0.5
    done
    __answers "$h" || { echo "error: the bridged dockerd did not answer; see $log" >&2; tail -n 20 "$log" >&2; return 3; }
  fi
  # The image, as the main daemon has it now.
  local want have
  want="$(DOCKER_HOST="$main" docker image inspect -f '{{.Id}}' "$image" 2>/dev/null)"
  have="$(DOCKER_HOST="$h" docker image inspect -f '{{.Id}}' "$image" 2>/dev/null)"
  if [ -z "$want" ]; then
    echo "error: the main daemon ($main) has no $image: build it with \`tandem sandbox build\`" >&2
    return 1
  fi
  if [ "$want" != "$have" ]; then
    echo "== copying $image to the bridged daemon" >&2
    DOCKER_HOST="$main" docker save "$image" | DOCKER_HOST="$h" docker load >/dev/null || return 1
  fi
  export TANDEM_BRIDGE_DOCKER_HOST="$h"
  echo "export TANDEM_BRIDGE_DOCKER_HOST=$h"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  __tandem_docker_bridge
  exit
fi
__tandem_docker_bridge
__tandem_docker_bridge_rc=$?
unset -f __tandem_docker_bridge __answers
# Its status (3: no bridge can run here), with no variable left behind.
eval "unset __tandem_docker_bridge_rc; return $__tandem_docker_bridge_rc"
