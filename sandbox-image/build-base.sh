#!/usr/bin/env bash
# Builds the sandbox's base image without any registry: debootstrap a minbase Debian bookworm
# rootfs and `docker import` it as tandem-base:bookworm (sandbox-image/Dockerfile starts FROM it).
#
#   sudo sandbox-image/build-base.sh [--force] [TAG]
#
# TAG defaults to tandem-base:bookworm. Idempotent: an existing TAG is kept unless --force.
# Environment: DOCKER_HOST (the daemon), TANDEM_DEBIAN_MIRROR (default: the host's apt mirror,
# else http://deb.debian.org/debian), TANDEM_DEBIAN_SECURITY_MIRROR (default
# http://deb.debian.org/debian-security), TMPDIR (where the rootfs is assembled).
set -euo pipefail

SUITE=bookworm
TAG=tandem-base:bookworm
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h | --help)
      sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "error: unknown option $arg (expected --force or a TAG)" >&2
      exit 2
      ;;
    *) TAG="$arg" ;;
  esac
done

die() {
  echo "error: $*" >&2
  exit 1
}

# --- preconditions: each failure names its cause and its fix ---
command -v docker >/dev/null ||
  die "the docker CLI is not installed. Fix: apt-get install docker.io (or run scripts/setup.sh)"
if ! docker_err="$(docker version --format '{{.Server.Version}}' 2>&1 >/dev/null)"; then
  die "the Docker daemon at ${DOCKER_HOST:-unix:///var/run/docker.sock} does not answer: ${docker_err##*$'\n'}
Fix: start one with 'source scripts/docker.sh' (as root), or point DOCKER_HOST at a running daemon; a 'permission denied' means your user may not use that socket (run as root or join the docker group)"
fi
if docker image inspect "$TAG" >/dev/null 2>&1 && [ "$FORCE" -eq 0 ]; then
  echo "$TAG already exists ($(docker image inspect --format '{{.Created}}' "$TAG")); nothing to do. Pass --force to rebuild it."
  exit 0
fi
[ "$(id -u)" -eq 0 ] ||
  die "debootstrap needs root (it creates device nodes and chroots). Fix: sudo $0 $*"
DEBOOTSTRAP="$(command -v debootstrap || true)"
[ -n "$DEBOOTSTRAP" ] || [ ! -x /usr/sbin/debootstrap ] || DEBOOTSTRAP=/usr/sbin/debootstrap
[ -n "$DEBOOTSTRAP" ] ||
  die "debootstrap is not installed. Fix: apt-get install debootstrap (or run scripts/setup.sh)"

# The host's Debian mirror (one-line or deb822 sources), so a host behind a local mirror or
# proxy uses the same one; deb.debian.org otherwise.
host_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    grep -hoE '(^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?|^URIs:[[:space:]]*)https?://[^[:space:]]+/debian/?([[:space:]]|$)' "$f" |
      grep -oE 'https?://[^[:space:]]+' | head -n1
  done | head -n1
}
MIRROR="${TANDEM_DEBIAN_MIRROR:-$(host_mirror)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
MIRROR="${MIRROR%/}"
SECURITY_MIRROR="${TANDEM_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

work="$(mktemp -d "${TMPDIR:-/var/tmp}/tandem-base.XXXXXX")"
rootfs="$work/rootfs"
log="$work/debootstrap.log"
cleanup() {
  # A debootstrap that failed half-way may leave /proc or /sys mounted inside the rootfs:
  # unmount them before deleting, and never cross into another file system.
  local m
  for m in $(awk -v r="$rootfs" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# minbase is ~200 MB unpacked; the tar stream lands in Docker's data root too.
need_mb=600
avail_mb="$(df -Pm "$work" | awk 'NR == 2 { print $4 }')"
if [ "${avail_mb:-0}" -lt "$need_mb" ]; then
  die "No space left on device: only ${avail_mb} MB free in $(dirname "$work") (the rootfs needs about $need_mb MB). Fix: free disk space or set TMPDIR to a roomier folder"
fi
docker_root="$(docker info --format '{{.DockerRootDir}}' 2>/dev/null || true)"
if [ -n "$docker_root" ] && [ -d "$docker_root" ]; then
  avail_mb="$(df -Pm "$docker_root" | awk 'NR == 2 { print $4 }')"
  [ "${avail_mb:-0}" -ge "$need_mb" ] ||
    die "No space left on device: only ${avail_mb} MB free for Docker's data root $docker_root (the image needs about $need_mb MB). Fix: free disk space there (docker image prune)"
fi

no_space() { grep -qi 'no space left on device' "$@" 2>/dev/null; }

start=$SECONDS
echo "== debootstrap --variant=minbase $SUITE from $MIRROR (log: $log)"
if ! "$DEBOOTSTRAP" --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$log" 2>&1; then
  tail -n 15 "$log" >&2
  if no_space "$log" "$rootfs/debootstrap/debootstrap.log"; then
    die "No space left on device: the disk filled up while debootstrap unpacked Debian into $work. Fix: free disk space or set TMPDIR to a roomier folder"
  fi
  die "debootstrap failed (see the lines above). Fix: check that $MIRROR is reachable (or set TANDEM_DEBIAN_MIRROR to a mirror that is)"
fi

# Sources like debian:bookworm-slim's: updates and security too (Chromium's fixes come from
# bookworm-security).
cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
EOF
# Slim the same way the official slim images do: no docs, man pages or translations from the
# packages installed later, and apt keeps no downloaded .debs.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
EOF
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/log/* \
  "$rootfs"/tmp/* "$rootfs"/var/tmp/* "$rootfs"/usr/share/man/* "$rootfs"/debootstrap
find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
mkdir -p "$rootfs/var/lib/apt/lists/partial" "$rootfs/var/cache/apt/archives/partial"
# Docker provides /dev, /etc/hostname, /etc/hosts and /etc/resolv.conf at run time.
find "$rootfs/dev" -mindepth 1 -delete
: >"$rootfs/etc/hostname"
: >"$rootfs/etc/resolv.conf"
echo "== rootfs $(du -sm --one-file-system "$rootfs" | cut -f1) MB after $((SECONDS - start)) s; docker import as $TAG"

import_log="$work/import.log"
if ! tar --numeric-owner --xattrs -C "$rootfs" -c . 2>"$import_log" |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["bash"]' \
    --message "debootstrap --variant=minbase $SUITE $MIRROR" \
    - "$TAG" >>"$import_log" 2>&1; then
  cat "$import_log" >&2
  if no_space "$import_log"; then
    die "No space left on device: the disk filled up while Docker stored the image. Fix: free space in Docker's data root (${docker_root:-unknown}) and run again"
  fi
  die "docker import of the rootfs failed (see above)"
fi
echo "== $TAG: $(docker image inspect --format '{{.Size}}' "$TAG" | awk '{ printf "%d MB", $1 / 1e6 }'), built in $((SECONDS - start)) s"
