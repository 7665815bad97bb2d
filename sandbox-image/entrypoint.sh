#!/bin/bash
# The sandbox's entrypoint (run by tini as root): a virtual desktop for the agent's browser, then
# `tandem serve` as the non-root user `tandem`. See README.md for the contract.
#
#   tandem-entrypoint [ARGS...]   starts the desktop and execs `tandem serve ... ARGS...`
#   tandem-entrypoint health      exits 0 when GET /health answers 200 (the image's HEALTHCHECK)
#
# A desktop that fails to start is logged and left out (no TANDEM_VNC_ADDR): the server starts
# anyway. Every other variable of the environment (LLM keys, forwarded --env) passes through.
set -uo pipefail

log() { echo "tandem-entrypoint: $*" >&2; }
fail() {
  log "error: $*"
  exit 2
}

HOST="${TANDEM_HOST:-127.0.0.1}"
PORT="${TANDEM_PORT:-8000}"
VNC_PORT="${TANDEM_VNC_PORT:-5900}"

if [ "${1:-}" = health ]; then
  h="$HOST"
  case "$h" in 0.0.0.0 | "") h=127.0.0.1 ;; :: | "[::]") h=::1 ;; esac
  exec 3<>"/dev/tcp/$h/$PORT" || exit 1
  printf 'GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
  read -r -t 4 _ code _ <&3 || exit 1
  [ "$code" = 200 ]
  exit
fi

is_port() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 65535 ]; }
is_id() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -lt 4294967295 ]; }
is_port "$PORT" || fail "TANDEM_PORT=$PORT is not a TCP port (1-65535)"
is_port "$VNC_PORT" || fail "TANDEM_VNC_PORT=$VNC_PORT is not a TCP port (1-65535)"

# --- the user: `tandem` (uid 1000) unless TANDEM_UID/TANDEM_GID name the workspace's owner ---
USER_NAME=tandem
USER_HOME=/home/tandem
if [ "$(id -u)" -eq 0 ]; then
  uid="${TANDEM_UID:-1000}"
  gid="${TANDEM_GID:-$uid}"
  is_id "$uid" || fail "TANDEM_UID=$uid is not a numeric user id"
  is_id "$gid" || fail "TANDEM_GID=$gid is not a numeric group id"
  chown_workspace=0
  # The agent never runs as root: a root-owned workspace is handed to uid 1000.
  if [ "$uid" -eq 0 ]; then
    uid=1000
    chown_workspace=1
  fi
  [ "$gid" -ne 0 ] || gid=1000
  if [ "$gid" != "$(id -g "$USER_NAME")" ]; then
    groupmod --non-unique --gid "$gid" "$USER_NAME" || fail "cannot give group $USER_NAME the id $gid"
  fi
  if [ "$uid" != "$(id -u "$USER_NAME")" ]; then
    usermod --non-unique --uid "$uid" --gid "$gid" "$USER_NAME" || fail "cannot give user $USER_NAME the id $uid"
  fi
  chown -R "$uid:$gid" "$USER_HOME"
  if [ "$chown_workspace" -eq 1 ] && [ -d /workspace ]; then
    chown -R "$uid:$gid" /workspace || log "warning: cannot chown /workspace to $uid:$gid"
  fi
  # No way back to root: setuid binaries and file capabilities are ignored from here on.
  as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --no-new-privs --)
else
  # Started with --user: run everything as that user.
  uid="$(id -u)"
  gid="$(id -g)"
  as_user=()
fi

export HOME="$USER_HOME" USER="$USER_NAME" LOGNAME="$USER_NAME" SHELL=/bin/bash
export TANDEM_HOME="${TANDEM_HOME:-$USER_HOME/.tandem}"
export OH_WORKSPACE_PATH=/workspace
"${as_user[@]}" mkdir -p "$TANDEM_HOME" 2>/dev/null || true

# --- the desktop: Xvfb, openbox, x11vnc on loopback ---
desk=/tmp/tandem-desktop
rm -rf "$desk"
mkdir -p "$desk"
chown "$uid:$gid" "$desk"
chmod 700 "$desk"

# Runs "$@" as the user in the background with its output in $desk/NAME.log, detached so that
# tini (PID 1) reaps it, and prints its pid.
spawn() {
  local name="$1"
  shift
  ("${as_user[@]}" "$@" >"$desk/$name.log" 2>&1 </dev/null &
    echo $!)
}
# The inodes of the TCP sockets listening on $VNC_PORT (any address), and whether PID holds one.
listen_inodes() {
  local hex
  hex="$(printf ':%04X' "$VNC_PORT")"
  awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
listens() {
  local inode
  for inode in $(listen_inodes); do
    # Read as the user: root without CAP_SYS_PTRACE may not look at another user's fds.
    "${as_user[@]}" find "/proc/$1/fd" -lname "socket:\\[$inode\\]" 2>/dev/null | grep -q . && return 0
  done
  return 1
}
log_tail() { tail -n 5 "$desk/$1.log" 2>/dev/null | sed "s/^/  $1: /" >&2; }

start_desktop() {
  # A cookie on the display: only holders of $XAUTHORITY may connect. The abstract socket stays
  # on: X clients try it before the file socket, and with --network host its namespace is the
  # host's, so a display number whose abstract socket belongs to the host or another sandbox
  # would connect our clients to that X server. Claiming both, -displayfd skips such numbers.
  local cookie display="" xvfb wm vnc i ready=0
  cookie="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  export XAUTHORITY="$USER_HOME/.Xauthority"
  rm -f "$XAUTHORITY" "$desk/server.auth"
  "${as_user[@]}" touch "$XAUTHORITY" "$desk/server.auth"
  "${as_user[@]}" xauth -q -f "$desk/server.auth" add :0 MIT-MAGIC-COOKIE-1 "$cookie" ||
    { log "warning: xauth failed: no desktop"; return 1; }
  : >"$desk/display"
  xvfb="$( ("${as_user[@]}" Xvfb -displayfd 3 -auth "$desk/server.auth" -nolisten tcp \
    -screen 0 1280x800x24 >"$desk/xvfb.log" 2>&1 3>"$desk/display" </dev/null &
    echo $!))"
  for ((i = 0; i < 100; i++)); do
    read -r display <"$desk/display" 2>/dev/null
    [ -z "$display" ] || break
    kill -0 "$xvfb" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$display" ]; then
    log "warning: Xvfb did not start: no desktop"
    log_tail xvfb
    return 1
  fi
  export DISPLAY=":$display"
  "${as_user[@]}" xauth -q -f "$XAUTHORITY" add "$DISPLAY" MIT-MAGIC-COOKIE-1 "$cookie"
  wm="$(spawn openbox openbox --sm-disable)"
  if [ -n "$(listen_inodes)" ]; then
    log "warning: port $VNC_PORT (TANDEM_VNC_PORT) is taken on this host: the desktop runs but cannot be viewed"
    return 0
  fi
  vnc="$(spawn x11vnc x11vnc -display "$DISPLAY" -auth "$XAUTHORITY" -localhost -noipv6 \
    -rfbport "$VNC_PORT" -forever -shared -nopw -quiet -norc -xkb)"
  # Ready when our own x11vnc listens on the port (with --network host another process may hold
  # it: then x11vnc exits and the desktop is not offered).
  for ((i = 0; i < 100; i++)); do
    kill -0 "$vnc" 2>/dev/null || break
    if listens "$vnc"; then
      ready=1
      break
    fi
    sleep 0.1
  done
  if [ "$ready" -eq 0 ]; then
    log "warning: x11vnc did not start on 127.0.0.1:$VNC_PORT: the desktop runs but cannot be viewed"
    log_tail x11vnc
    kill "$vnc" 2>/dev/null
    return 0
  fi
  kill -0 "$wm" 2>/dev/null || { log "warning: openbox exited: the desktop has no window manager"; log_tail openbox; }
  export TANDEM_VNC_ADDR="127.0.0.1:$VNC_PORT"
  log "desktop $DISPLAY (1280x800), VNC on $TANDEM_VNC_ADDR"
}
unset TANDEM_VNC_ADDR DISPLAY XAUTHORITY
# `tandem serve` says where agents run (here, not on the person's machine).
export TANDEM_SANDBOX=docker
if start_desktop; then
  export TANDEM_BROWSER_HEADLESS=0
fi

# Chromium's own sandbox needs user namespaces, which Docker's default seccomp profile forbids:
# without them the container is the sandbox (see /etc/chromium.d/tandem-sandbox).
if [ -z "${TANDEM_CHROMIUM_NO_SANDBOX:-}" ]; then
  if "${as_user[@]}" unshare --user true 2>/dev/null; then
    export TANDEM_CHROMIUM_NO_SANDBOX=0
  else
    export TANDEM_CHROMIUM_NO_SANDBOX=1
    log "no user namespaces here: Chromium runs with --no-sandbox (the container isolates it)"
  fi
fi

cd /workspace 2>/dev/null || cd "$USER_HOME" || true
exec "${as_user[@]}" /usr/local/bin/tandem serve --host "$HOST" --port "$PORT" "$@"
