#!/usr/bin/env bash
# Makes sure a Docker daemon answers and exports DOCKER_HOST for it.
#
#   source scripts/docker.sh     (scripts/test.sh does this) or   scripts/docker.sh
#
# Uses $DOCKER_HOST (or Docker's default socket) when `docker version` answers there; else the
# project's own daemon on unix:///run/tandem-docker.sock, started here as root when it is not
# running yet: Debian's dockerd without iptables, IP forwarding or a bridge (containers use
# --network host), its data under /var/lib/tandem-docker. Prints `export DOCKER_HOST=...`.
# TANDEM_DOCKER_SOCK and TANDEM_DOCKER_ROOT move the socket (its .pid beside it) and the data.
# Sourced, it returns non-zero on failure (never exits the caller's shell) and leaves no
# variables or options behind other than DOCKER_HOST.

__tandem_docker() {
  local sock="${TANDEM_DOCKER_SOCK:-/run/tandem-docker.sock}"
  local root="${TANDEM_DOCKER_ROOT:-/var/lib/tandem-docker}"
  local pidfile="${sock%.sock}.pid"
  local log="$root/dockerd.log"
  local wait_s="${TANDEM_DOCKERD_WAIT:-60}"

  if ! command -v docker >/dev/null 2>&1; then
    echo "error: the docker CLI is not installed. Fix: apt-get install docker.io (or run scripts/setup.sh)" >&2
    return 1
  fi
  __tandem_docker_answers() { DOCKER_HOST="$1" timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

  # 1. A daemon that already answers: $DOCKER_HOST, the project's socket, Docker's default one.
  local h
  for h in ${DOCKER_HOST:+"$DOCKER_HOST"} "unix://$sock" unix:///var/run/docker.sock; do
    if __tandem_docker_answers "$h"; then
      export DOCKER_HOST="$h"
      echo "export DOCKER_HOST=$h"
      return 0
    fi
    if [ "$h" = "${DOCKER_HOST:-}" ]; then
      echo "note: no Docker daemon answers at DOCKER_HOST=$DOCKER_HOST; trying the project's own" >&2
    fi
  done

  # 2. Start the project's daemon.
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: no Docker daemon answers and starting one needs root. Fix: run 'sudo scripts/docker.sh' (then export DOCKER_HOST=unix://$sock), or start Docker and add your user to the docker group" >&2
    return 1
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    echo "error: dockerd is not installed. Fix: apt-get install docker.io (or run scripts/setup.sh)" >&2
    return 1
  fi
  # A daemon of ours still starting (or hung): wait for it rather than start a second one.
  local pid=""
  if [ -r "$pidfile" ]; then
    pid="$(cat "$pidfile" 2>/dev/null)"
    if [ -n "$pid" ] && ! grep -qs dockerd "/proc/$pid/comm"; then
      pid=""
    fi
  fi
  mkdir -p "$root/data" "$root/exec"
  # Only this attempt's part of the log is shown on failure.
  local log_from
  log_from="$(stat -c %s "$log" 2>/dev/null || echo 0)"
  __tandem_docker_log_tail() { tail -c +$((log_from + 1)) "$log" 2>/dev/null | tail -n 20; }
  if [ -z "$pid" ]; then
    rm -f "$pidfile"
    echo "== starting dockerd on unix://$sock (log: $log)" >&2
    # setsid + nohup: the daemon outlives this shell and its terminal.
    setsid nohup dockerd --iptables=false --ip-forward=false --bridge=none \
      --data-root "$root/data" --exec-root "$root/exec" \
      -H "unix://$sock" --pidfile "$pidfile" >>"$log" 2>&1 </dev/null &
    pid=$!
  else
    echo "== dockerd (pid $pid) is starting on unix://$sock; waiting for it" >&2
  fi
  local deadline=$((SECONDS + wait_s)) started=$SECONDS
  while [ "$SECONDS" -lt "$deadline" ]; do
    if __tandem_docker_answers "unix://$sock"; then
      export DOCKER_HOST="unix://$sock"
      echo "export DOCKER_HOST=$DOCKER_HOST"
      return 0
    fi
    # Alive: the process started here, or (when setsid had to fork) the one in dockerd's pidfile.
    local alive=0 p
    for p in "$pid" "$(cat "$pidfile" 2>/dev/null)"; do
      if [ -n "$p" ] && grep -qs dockerd "/proc/$p/comm"; then alive=1; fi
    done
    if [ "$alive" -eq 0 ] && [ $((SECONDS - started)) -ge 3 ]; then
      echo "error: dockerd exited while starting. The end of $log:" >&2
      __tandem_docker_log_tail | sed 's/^/  /' >&2
      if __tandem_docker_log_tail | grep -qi 'no space left on device'; then
        echo "Fix: free disk space under $root" >&2
      fi
      return 1
    fi
    sleep 0.5
  done
  echo "error: dockerd (pid $pid) did not answer on unix://$sock within ${wait_s} s. The end of $log:" >&2
  __tandem_docker_log_tail | sed 's/^/  /' >&2
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  __tandem_docker
  exit
fi
if __tandem_docker; then
  unset -f __tandem_docker __tandem_docker_answers __tandem_docker_log_tail
  return 0
fi
unset -f __tandem_docker __tandem_docker_answers __tandem_docker_log_tail
return 1
