#!/bin/bash
# The sandbox's entrypoint (run by tini as root): a virtual desktop for the agent's browser, then
# `tandem serve` as root, which runs every command of the agent as the user `tandem` (the
# workspace's owner). See README.md for the contract.
#
#   tandem-entrypoint [ARGS...]   starts the desktop and execs `tandem serve ... ARGS...`
#   tandem-entrypoint health      exits 0 when GET /health answers 200 (the image's HEALTHCHECK)
#   tandem-chromium ARGS...       (a link to this script) Chromium as the agent's user
#
# Two users, so that the agent cannot find the server's keys: the server runs as root and reads
# its session key from /run/tandem/session-key and its LLM from /var/lib/tandem/settings.json,
# files only root can read, put there by the starter before the container starts (never in an
# environment: `docker inspect` and /proc/*/environ show none). The agent's commands (terminal,
# /api/bash, Chromium) run as `tandem`, whose uid and gid are the workspace's owner's
# (TANDEM_UID, TANDEM_GID), so what it writes belongs to the person and nothing is chowned.
set -uo pipefail

log() { echo "tandem-entrypoint: $*" >&2; }
fail() {
  log "error: $*"
  exit 2
}

HOST="${TANDEM_HOST:-127.0.0.1}"
PORT="${TANDEM_PORT:-8000}"
USER_NAME=tandem
USER_HOME=/home/tandem
# Root's own folder: the server's home and secrets; the agent's user cannot enter either.
SERVER_HOME=/var/lib/tandem
SECRETS=/run/tandem
# The VNC server's socket: in SECRETS, so only the server (root) can connect to it.
VNC_SOCKET="$SECRETS/vnc.sock"

if [ "${1:-}" = health ]; then
  if [ "$PORT" = 0 ]; then
    # The kernel chose the server's port: the one the server's listening socket has.
    pid="$(pgrep -o -x tandem)" || exit 1
    inodes=" $(find "/proc/$pid/fd" -lname 'socket:*' -printf '%l ' 2>/dev/null | tr -d 'socket:[]') "
    hex="$(awk -v ids="$inodes" '$4 == "0A" && index(ids, " " $10 " ") { split($2, a, ":"); print a[2]; exit }' /proc/net/tcp /proc/net/tcp6)"
    [ -n "$hex" ] || exit 1
    PORT=$((16#$hex))
  fi
  h="$HOST"
  case "$h" in 0.0.0.0 | "") h=127.0.0.1 ;; :: | "[::]") h=::1 ;; esac
  exec 3<>"/dev/tcp/$h/$PORT" || exit 1
  printf 'GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
  read -r -t 4 _ code _ <&3 || exit 1
  [ "$code" = 200 ]
  exit
fi

# --- tandem-chromium: the agent's Chromium, started by the server (root) as the agent's user ---
# Its profile moves to a folder that user owns (the server keeps conversations where that user
# cannot look); its output stays the server's (the DevTools address is read from it).
if [ "$(basename "$0")" = tandem-chromium ]; then
  uid="${TANDEM_AGENT_UID:-}"
  gid="${TANDEM_AGENT_GID:-$uid}"
  [ -n "$uid" ] || exec /usr/bin/chromium "$@"
  args=()
  for a in "$@"; do
    case "$a" in
      --user-data-dir=*)
        profile="/tmp/tandem-browser/$(printf '%s' "${a#--user-data-dir=}" | md5sum | cut -c1-16)"
        install -d -m 0755 /tmp/tandem-browser
        install -d -o "$uid" -g "$gid" -m 0700 "$profile"
        args+=("--user-data-dir=$profile")
        ;;
      *) args+=("$a") ;;
    esac
  done
  export HOME="${TANDEM_AGENT_HOME:-$USER_HOME}"
  if [ "$(id -u)" -eq 0 ] && [ "$uid" != 0 ]; then
    exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --no-new-privs \
      --pdeathsig=keep -- /usr/bin/chromium "${args[@]}"
  fi
  exec /usr/bin/chromium "${args[@]}"
fi

is_port() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 0 ] && [ "$1" -le 65535 ]; }
is_id() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -lt 4294967295 ]; }
is_port "$PORT" || fail "TANDEM_PORT=$PORT is not a TCP port (0-65535)"
[ "$(id -u)" -eq 0 ] || fail "the sandbox starts as root (it runs the server as root and the agent as the workspace's owner); do not pass --user"

# --- the agent's user: `tandem`, with the workspace owner's ids (TANDEM_UID, TANDEM_GID) ---
uid="${TANDEM_UID:-1000}"
gid="${TANDEM_GID:-$uid}"
is_id "$uid" || fail "TANDEM_UID=$uid is not a numeric user id"
is_id "$gid" || fail "TANDEM_GID=$gid is not a numeric group id"
if [ "$uid" -eq 0 ] && [ "${TANDEM_ALLOW_ROOT:-0}" != 1 ]; then
  fail "the workspace is owned by root: the agent would have to run as root inside the sandbox, where it could read the server's keys, or files would have to change owner (they never do). Choose a folder your own user owns, or opt in to an agent running as root with --allow-root (TANDEM_ALLOW_ROOT=1)"
fi
if [ "$uid" -eq 0 ]; then
  log "warning: --allow-root: the agent runs as root inside the sandbox and can read the server's keys"
  USER_NAME=root
  USER_HOME=/root
else
  if [ "$gid" != "$(id -g tandem)" ]; then
    groupmod --non-unique --gid "$gid" tandem || fail "cannot give group tandem the id $gid"
  fi
  if [ "$uid" != "$(id -u tandem)" ]; then
    usermod --non-unique --uid "$uid" --gid "$gid" tandem || fail "cannot give user tandem the id $uid"
  fi
  # The image's own home folder (never the workspace: nothing of the person's changes owner).
  chown -R "$uid:$gid" "$USER_HOME"
fi
# Runs "$@" as the agent's user, with no way back to root (no capabilities, no setuid).
as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --no-new-privs --)

# --- the server's folders: root only ---
install -d -m 0700 "$SERVER_HOME" "$SECRETS"
[ -d "$SERVER_HOME/conversations" ] || install -d -m 0700 "$SERVER_HOME/conversations"
key_args=()
if [ -f "$SECRETS/session-key" ]; then
  chown 0:0 "$SECRETS/session-key"
  chmod 0400 "$SECRETS/session-key"
  key_args=(--session-key-file "$SECRETS/session-key")
fi
[ ! -f "$SERVER_HOME/settings.json" ] || chmod 0600 "$SERVER_HOME/settings.json"

export HOME="$SERVER_HOME" USER=root LOGNAME=root SHELL=/bin/bash
export TANDEM_HOME="$SERVER_HOME"
export OH_WORKSPACE_PATH=/workspace
export TANDEM_AGENT_UID="$uid" TANDEM_AGENT_GID="$gid" TANDEM_AGENT_HOME="$USER_HOME"
export TANDEM_CHROMIUM=/usr/local/bin/tandem-chromium

# --- the desktop: Xvfb and openbox as the agent's user, x11vnc (root) on a unix socket ---
desk=/tmp/tandem-desktop
rm -rf "$desk"
install -d -o "$uid" -g "$gid" -m 0700 "$desk"

# Runs "$@" in the background with its output in $desk/NAME.log, detached so that tini (PID 1)
# reaps it, and prints its pid.
spawn() {
  local name="$1"
  shift
  ("$@" >"$desk/$name.log" 2>&1 </dev/null &
    echo $!)
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
  wm="$(spawn openbox "${as_user[@]}" openbox --sm-disable)"
  # No TCP port at all (-rfbport 0, -no6 -rfbportv6 0): the RFB server is reachable only
  # through its socket, in a folder only root (the server) can enter; the person reaches it
  # through the server's authenticated /sockets/vnc.
  # -noshm: x11vnc (root) may not attach shared memory to an X server of another user.
  rm -f "$VNC_SOCKET"
  vnc="$(spawn x11vnc x11vnc -display "$DISPLAY" -auth "$XAUTHORITY" -unixsock "$VNC_SOCKET" \
    -rfbport 0 -no6 -rfbportv6 0 -noshm -forever -shared -nopw -quiet -norc -xkb)"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$vnc" 2>/dev/null || break
    if [ -S "$VNC_SOCKET" ]; then
      ready=1
      break
    fi
    sleep 0.1
  done
  if [ "$ready" -eq 0 ]; then
    log "warning: x11vnc did not start on $VNC_SOCKET: the desktop runs but cannot be viewed"
    log_tail x11vnc
    kill "$vnc" 2>/dev/null
    return 0
  fi
  kill -0 "$wm" 2>/dev/null || { log "warning: openbox exited: the desktop has no window manager"; log_tail openbox; }
  export TANDEM_VNC_ADDR="$VNC_SOCKET"
  log "desktop $DISPLAY (1280x800), VNC on the unix socket $TANDEM_VNC_ADDR (server only)"
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

cd /workspace 2>/dev/null || cd "$SERVER_HOME" || true
log "server as root; the agent's commands as $USER_NAME ($uid:$gid)"
# The server keeps only the capabilities it needs: switching to the agent's user, signalling
# and reading its processes' files, and giving it what it creates.
exec setpriv --no-new-privs --inh-caps=-all \
  --bounding-set=-all,+chown,+dac_override,+dac_read_search,+fowner,+kill,+setgid,+setuid -- \
  /usr/local/bin/tandem serve --host "$HOST" --port "$PORT" "${key_args[@]}" "$@"
