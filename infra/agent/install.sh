#!/usr/bin/env bash
# Installs the Volley agent as a systemd service:
#
#   curl -fsSL https://<your volley>/install-agent.sh | sudo bash -s -- --token <join token> --hub https://hub.example.com \
#     --package-url https://<your volley>/agent/volley-agent.tgz
#   sudo ./install.sh --token <join token> --hub https://hub.example.com --package-url <url> [--pool default] [--name host-1] [--labels region=eu,rack=a]
#   sudo ./install.sh --uninstall
#
# The agent comes from your own Volley install: web serves it, bundled, at /agent/volley-agent.tgz
# with its SHA-256 beside it (.sha256); the installer checks the download against it, then npm
# installs it (its third-party dependencies come from the npm registry).
#
# Safe to run again: the same arguments change nothing (and it says so); a new token, hub, pool or
# package updates what changed and restarts the agent. The token is never printed, never passed
# on a command line it spawns, and lands only in an env file readable by the service user alone.
#
# VOLLEY_INSTALL_ROOT=/some/dir installs into a throwaway root instead of / (the tests do that,
# with a stand-in `systemctl` on PATH).
set -euo pipefail

# The names apps/agent/src/env.ts reads. Keep in step with it.
readonly ENV_HUB_URL=HUB_URL
readonly ENV_TOKEN=AGENT_TOKEN
readonly ENV_NAME=AGENT_NAME
readonly ENV_POOL=AGENT_POOL
readonly ENV_LABELS=AGENT_LABELS
readonly ENV_MAX_CONNECTIONS=AGENT_MAX_CONNECTIONS

readonly SERVICE=volley-agent
readonly MIN_NODE_MAJOR=20
ROOT="${VOLLEY_INSTALL_ROOT:-}"
ROOT="${ROOT%/}"

say() { printf 'volley-agent install: %s\n' "$*"; }
die() {
  printf 'volley-agent install: error: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat <<'EOF'
Usage: install.sh --token <join token> --hub <url> [options]
       install.sh --uninstall [--user <name>]

Installs the Volley agent from your Volley install and runs it as the systemd service volley-agent.

Required (install):
  --token <token>          join token from the Volley web app; "-" reads it from stdin
                           (keeps it out of your shell history and the process list)
  --hub <url>              the hub's http(s) URL, e.g. https://hub.example.com
  --package-url <url>      the agent package your Volley web serves, e.g.
                           https://volley.example.com/agent/volley-agent.tgz (checked against <url>.sha256)
                           (or --package <tarball or npm spec> instead)

Options:
  --pool <pool>            agent pool (lowercase letters, digits, dashes; default: default)
  --name <name>            agent name shown in the UI (default: the host name)
  --labels <k=v,...>       comma-separated labels, e.g. region=eu,rack=a
  --max-connections <n>    connections this agent accepts at most (default: the agent's own)
  --package <spec>         a local agent tarball (or npm package spec) to install instead of --package-url
  --user <name>            system user the service runs as (default: volley-agent)
  --uninstall              stop and remove the service, its env file, package and user
  -h, --help               this help
EOF
}

need_value() {
  # $1 flag, $2 how many args remain including the flag
  [[ "$2" -ge 2 ]] || die "$1 needs a value, e.g. $1 $(example_for "$1")"
}

example_for() {
  case "$1" in
    --token) echo '<join token>' ;;
    --hub) echo 'https://hub.example.com' ;;
    --pool) echo 'default' ;;
    --name) echo 'loadgen-1' ;;
    --labels) echo 'region=eu,rack=a' ;;
    --max-connections) echo '50000' ;;
    --package) echo './volley-agent.tgz' ;;
    --package-url) echo 'https://volley.example.com/agent/volley-agent.tgz' ;;
    --user) echo 'volley-agent' ;;
    *) echo '<value>' ;;
  esac
}

TOKEN="" HUB="" POOL="" NAME="" LABELS="" MAX_CONNECTIONS="" PACKAGE="" PACKAGE_URL="" SVC_USER="$SERVICE" UNINSTALL=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --token) need_value "$1" $#; TOKEN="$2"; shift 2 ;;
    --token=*) TOKEN="${1#*=}"; shift ;;
    --hub) need_value "$1" $#; HUB="$2"; shift 2 ;;
    --hub=*) HUB="${1#*=}"; shift ;;
    --pool) need_value "$1" $#; POOL="$2"; shift 2 ;;
    --pool=*) POOL="${1#*=}"; shift ;;
    --name) need_value "$1" $#; NAME="$2"; shift 2 ;;
    --name=*) NAME="${1#*=}"; shift ;;
    --labels) need_value "$1" $#; LABELS="$2"; shift 2 ;;
    --labels=*) LABELS="${1#*=}"; shift ;;
    --max-connections) need_value "$1" $#; MAX_CONNECTIONS="$2"; shift 2 ;;
    --max-connections=*) MAX_CONNECTIONS="${1#*=}"; shift ;;
    --package) need_value "$1" $#; PACKAGE="$2"; shift 2 ;;
    --package=*) PACKAGE="${1#*=}"; shift ;;
    --package-url) need_value "$1" $#; PACKAGE_URL="$2"; shift 2 ;;
    --package-url=*) PACKAGE_URL="${1#*=}"; shift ;;
    --user) need_value "$1" $#; SVC_USER="$2"; shift 2 ;;
    --user=*) SVC_USER="${1#*=}"; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option $1 — run with --help for the options" ;;
  esac
done

readonly ENV_DIR="$ROOT/etc/volley"
readonly ENV_FILE="$ENV_DIR/agent.env"
readonly UNIT_FILE="$ROOT/etc/systemd/system/$SERVICE.service"
readonly PREFIX_DIR="$ROOT/opt/volley-agent"
readonly SPEC_FILE="$PREFIX_DIR/.installed-package"
# Paths as the service sees them (without the throwaway root).
readonly LIVE_ENV_FILE="/etc/volley/agent.env"
readonly LIVE_PREFIX="/opt/volley-agent"

# ---------------------------------------------------------------------------------- preflight

[[ "$SVC_USER" =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] ||
  die "--user \"$SVC_USER\" is not a valid user name; use lowercase letters, digits, - and _, e.g. --user volley-agent"

[[ "$(id -u)" == 0 ]] || die "must run as root (it creates a system user and a systemd service); re-run with sudo"

if ! command -v systemctl >/dev/null 2>&1 || [[ ! -d "$ROOT/run/systemd/system" ]]; then
  die "systemd is not running here (no systemctl, or no $ROOT/run/systemd/system); this installer sets up a systemd service — elsewhere run the container image or \`volley-agent\` under your own supervisor"
fi

# ---------------------------------------------------------------------------------- helpers

user_exists() { grep -q "^$1:" "$ROOT/etc/passwd" 2>/dev/null; }
group_exists() { grep -q "^$1:" "$ROOT/etc/group" 2>/dev/null; }
# The user and group are created in $ROOT/etc (not through NSS), so read ids from there.
user_ids() { awk -F: -v u="$1" '$1 == u { print $3 ":" $4 }' "$ROOT/etc/passwd"; }

prefix_args=()
[[ -n "$ROOT" ]] && prefix_args=(--prefix "$ROOT")

# Writes stdin to $1 (mode $2, owner $3) only when the content differs; returns 0 when it wrote.
write_if_changed() {
  local target="$1" mode="$2" owner="$3" tmp
  tmp="$(mktemp "$(dirname "$target")/.volley-install.XXXXXX")"
  cat >"$tmp"
  if [[ -f "$target" ]] && cmp -s "$tmp" "$target" && [[ "$(stat -c '%a %u:%g' "$target")" == "$mode $owner" ]]; then
    rm -f "$tmp"
    return 1
  fi
  chmod "$mode" "$tmp"
  chown "$owner" "$tmp"
  mv -f "$tmp" "$target"
  return 0
}

# systemd EnvironmentFile value: double-quoted, with \ and " escaped.
env_line() {
  local v="$2"
  v="${v//\\/\\\\}"
  v="${v//\"/\\\"}"
  printf '%s="%s"\n' "$1" "$v"
}

# ---------------------------------------------------------------------------------- uninstall

if [[ "$UNINSTALL" == 1 ]]; then
  removed=0
  if [[ -f "$UNIT_FILE" ]]; then
    systemctl disable --now "$SERVICE.service" >/dev/null 2>&1 || true
    rm -f "$UNIT_FILE"
    systemctl daemon-reload
    say "removed the $SERVICE service"
    removed=1
  fi
  if [[ -f "$ENV_FILE" ]]; then
    rm -f "$ENV_FILE"
    rmdir "$ENV_DIR" 2>/dev/null || true
    say "removed $LIVE_ENV_FILE"
    removed=1
  fi
  if [[ -d "$PREFIX_DIR" ]]; then
    rm -rf "$PREFIX_DIR"
    say "removed $LIVE_PREFIX"
    removed=1
  fi
  if user_exists "$SVC_USER"; then
    userdel "${prefix_args[@]}" "$SVC_USER"
    say "removed user $SVC_USER"
    removed=1
  fi
  if group_exists "$SVC_USER"; then
    groupdel "${prefix_args[@]}" "$SVC_USER"
    removed=1
  fi
  [[ "$removed" == 1 ]] || say "nothing to remove: the Volley agent is not installed"
  exit 0
fi

# ---------------------------------------------------------------------------------- validate

if [[ "$TOKEN" == "-" ]]; then
  IFS= read -r TOKEN || true
fi
[[ -n "$TOKEN" ]] ||
  die "--token is required: pass the join token from the Volley web app, e.g. --token <join token> (or --token - to read it from stdin)"
# Never echo the token, not even in an error: name the flag and the rule only.
[[ "$TOKEN" =~ ^[A-Za-z0-9._~+/=:-]{8,4096}$ ]] ||
  die "--token does not look like a join token (8 or more letters, digits and ._~+/=:- with no spaces or quotes); copy it again from the Volley web app"

[[ -n "$HUB" ]] || die "--hub is required: pass the hub's URL, e.g. --hub https://hub.example.com"
[[ "$HUB" =~ ^https?://[A-Za-z0-9._~%-]+(\:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$ ]] ||
  die "--hub \"$HUB\" is not an http(s) URL; pass the hub's URL, e.g. --hub https://hub.example.com or --hub http://10.0.0.5:3001"
while [[ "$HUB" == */ ]]; do HUB="${HUB%/}"; done

[[ -z "$POOL" || "$POOL" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] ||
  die "--pool \"$POOL\" is not a pool name; use lowercase letters, digits and dashes, e.g. --pool default"
[[ -z "$NAME" || ("${#NAME}" -le 200 && "$NAME" =~ ^[[:print:]]+$) ]] ||
  die "--name must be 1 to 200 printable characters, e.g. --name loadgen-1"
if [[ -n "$LABELS" ]]; then
  IFS=, read -ra label_pairs <<<"$LABELS"
  for pair in "${label_pairs[@]}"; do
    [[ "$pair" =~ ^[a-z0-9]([a-z0-9._/-]{0,62})=[A-Za-z0-9._/:-]{0,63}$ ]] ||
      die "--labels entry \"$pair\" is not key=value (key: lowercase letters, digits, ._/-; value: no spaces or commas), e.g. --labels region=eu,rack=a"
  done
fi
[[ -z "$MAX_CONNECTIONS" || "$MAX_CONNECTIONS" =~ ^[1-9][0-9]{0,8}$ ]] ||
  die "--max-connections \"$MAX_CONNECTIONS\" is not a positive whole number, e.g. --max-connections 50000"
if [[ -n "$PACKAGE_URL" ]]; then
  [[ -z "$PACKAGE" ]] || die "pass either --package-url or --package, not both"
  [[ "$PACKAGE_URL" =~ ^https?://[^[:space:]\"\']+$ ]] ||
    die "--package-url \"$PACKAGE_URL\" is not an http(s) URL; copy the line from the Agents page, e.g. --package-url https://volley.example.com/agent/volley-agent.tgz"
else
  [[ -n "$PACKAGE" ]] ||
    die "--package-url is required: the agent package your Volley web serves, e.g. --package-url https://volley.example.com/agent/volley-agent.tgz (the Agents page's line has it), or --package <tarball>"
  [[ "$PACKAGE" != -* ]] ||
    die "--package needs a tarball path or an npm package spec, e.g. --package ./volley-agent.tgz"
fi

NODE_BIN="$(command -v node || true)"
[[ -n "$NODE_BIN" ]] ||
  die "Node.js $MIN_NODE_MAJOR or newer is required and none is on PATH; install it (https://nodejs.org or your distribution's nodejs package) and re-run"
node_version="$("$NODE_BIN" -p 'process.versions.node' 2>/dev/null || true)"
node_major=0
[[ "$node_version" =~ ^([0-9]+)\. ]] && node_major="${BASH_REMATCH[1]}"
[[ "$node_major" -ge "$MIN_NODE_MAJOR" ]] ||
  die "Node.js $MIN_NODE_MAJOR or newer is required, found ${node_version:-an unknown version} at $NODE_BIN; upgrade it and re-run"
command -v npm >/dev/null 2>&1 ||
  die "npm is required (it comes with Node.js) and is not on PATH; install it and re-run"

# ---------------------------------------------------------------------------------- install

changed=()
restart=0

if ! user_exists "$SVC_USER"; then
  useradd "${prefix_args[@]}" --system --user-group --no-create-home \
    --home-dir "/var/lib/$SERVICE" --shell /usr/sbin/nologin "$SVC_USER"
  changed+=("created system user $SVC_USER")
fi
ids="$(user_ids "$SVC_USER")"
[[ -n "$ids" ]] || die "user $SVC_USER exists but has no entry in $ROOT/etc/passwd; remove it or pick another with --user"

# Downloads $1 to the file $2 (curl, else wget, else Node's fetch: Node is there by now).
download() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    # shellcheck disable=SC2016 # JavaScript, not shell: the template literal is Node's.
    "$NODE_BIN" -e 'const [u, f] = process.argv.slice(1); fetch(u).then(async (r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); require("fs").writeFileSync(f, Buffer.from(await r.arrayBuffer())); }).catch((e) => { console.error(e.message); process.exit(1); });' "$1" "$2"
  fi
}

download_dir=""
cleanup_download() { [[ -z "$download_dir" ]] || rm -rf "$download_dir"; }
trap cleanup_download EXIT

# A tarball is identified by its content, so a rebuilt tarball at the same path is reinstalled.
package_id="$PACKAGE"
if [[ -n "$PACKAGE_URL" ]]; then
  download_dir="$(mktemp -d)"
  download "$PACKAGE_URL.sha256" "$download_dir/sha256" ||
    die "could not download $PACKAGE_URL.sha256; check --package-url (copy it from the Agents page) and that this host reaches your Volley web"
  expected_sha="$(awk 'NR == 1 { print $1 }' "$download_dir/sha256")"
  [[ "$expected_sha" =~ ^[0-9a-f]{64}$ ]] ||
    die "$PACKAGE_URL.sha256 is not a SHA-256 checksum; check --package-url points at your Volley web's /agent/volley-agent.tgz"
  package_id="$PACKAGE_URL sha256:$expected_sha"
  PACKAGE="$download_dir/volley-agent.tgz"
fi
if [[ -z "$PACKAGE_URL" && -f "$PACKAGE" ]]; then
  PACKAGE="$(cd "$(dirname "$PACKAGE")" && pwd)/$(basename "$PACKAGE")"
  package_id="$PACKAGE sha256:$(sha256sum "$PACKAGE" | cut -d' ' -f1)"
fi
if [[ ! -x "$PREFIX_DIR/bin/volley-agent" || "$(cat "$SPEC_FILE" 2>/dev/null || true)" != "$package_id" ]]; then
  if [[ -n "$PACKAGE_URL" ]]; then
    say "downloading $PACKAGE_URL…"
    download "$PACKAGE_URL" "$PACKAGE" ||
      die "could not download $PACKAGE_URL; check --package-url and that this host reaches your Volley web"
    actual_sha="$(sha256sum "$PACKAGE" | cut -d' ' -f1)"
    [[ "$actual_sha" == "$expected_sha" ]] ||
      die "the download of $PACKAGE_URL does not match its checksum (sha256 $actual_sha, expected $expected_sha); it was cut short or changed on the way — run the installer again"
  fi
  say "installing ${PACKAGE_URL:-$PACKAGE} into $LIVE_PREFIX (npm)…"
  mkdir -p "$PREFIX_DIR"
  npm install --global --prefix "$PREFIX_DIR" --no-audit --no-fund --loglevel=error "$PACKAGE" >&2 ||
    die "npm could not install ${PACKAGE_URL:-$PACKAGE}; check that this host reaches the npm registry (the agent's third-party dependencies come from it)"
  [[ -x "$PREFIX_DIR/bin/volley-agent" ]] ||
    die "${PACKAGE_URL:-$PACKAGE} installed no volley-agent command; pass the Volley agent package (--package-url from the Agents page)"
  printf '%s\n' "$package_id" >"$SPEC_FILE"
  changed+=("installed ${PACKAGE_URL:-$PACKAGE}")
  restart=1
fi

mkdir -p "$ENV_DIR"
chmod 0755 "$ENV_DIR"
old_env="$(cat "$ENV_FILE" 2>/dev/null || true)"
if {
  echo "# Written by the Volley agent installer; re-run it to change these."
  env_line "$ENV_HUB_URL" "$HUB"
  env_line "$ENV_TOKEN" "$TOKEN"
  [[ -n "$POOL" ]] && env_line "$ENV_POOL" "$POOL"
  [[ -n "$NAME" ]] && env_line "$ENV_NAME" "$NAME"
  [[ -n "$LABELS" ]] && env_line "$ENV_LABELS" "$LABELS"
  [[ -n "$MAX_CONNECTIONS" ]] && env_line "$ENV_MAX_CONNECTIONS" "$MAX_CONNECTIONS"
  true
} | write_if_changed "$ENV_FILE" 600 "$ids"; then
  if [[ -z "$old_env" ]]; then
    changed+=("wrote $LIVE_ENV_FILE (mode 0600, owner $SVC_USER)")
  elif [[ "$(grep "^$ENV_TOKEN=" <<<"$old_env" || true)" != "$(env_line "$ENV_TOKEN" "$TOKEN" | tr -d '\n')" ]]; then
    changed+=("updated $LIVE_ENV_FILE (new token)")
  else
    changed+=("updated $LIVE_ENV_FILE")
  fi
  restart=1
fi

unit_changed=0
mkdir -p "$(dirname "$UNIT_FILE")"
if write_if_changed "$UNIT_FILE" 644 0:0 <<EOF; then
# Written by the Volley agent installer.
[Unit]
Description=Volley load-testing agent
Documentation=https://github.com/volley/volley/tree/main/infra
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=$SVC_USER
Group=$SVC_USER
EnvironmentFile=$LIVE_ENV_FILE
Environment=NODE_ENV=production
ExecStart=$NODE_BIN $LIVE_PREFIX/bin/volley-agent daemon
StateDirectory=$SERVICE
WorkingDirectory=/var/lib/$SERVICE
Restart=always
RestartSec=2
# Tens of thousands of sockets, each a file descriptor.
LimitNOFILE=1048576
TasksMax=infinity
KillSignal=SIGTERM
TimeoutStopSec=30

NoNewPrivileges=yes
CapabilityBoundingSet=
AmbientCapabilities=
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK
SystemCallArchitectures=native
# No MemoryDenyWriteExecute: V8's JIT needs writable executable memory.

[Install]
WantedBy=multi-user.target
EOF
  changed+=("wrote /etc/systemd/system/$SERVICE.service")
  unit_changed=1
  restart=1
fi

if [[ "$unit_changed" == 1 ]]; then
  systemctl daemon-reload
fi
if ! systemctl is-enabled --quiet "$SERVICE.service" 2>/dev/null; then
  systemctl enable "$SERVICE.service" >/dev/null 2>&1 || die "systemctl enable $SERVICE failed; see systemctl status $SERVICE"
  changed+=("enabled $SERVICE at boot")
fi
if [[ "$restart" == 1 ]] || ! systemctl is-active --quiet "$SERVICE.service" 2>/dev/null; then
  systemctl restart "$SERVICE.service" || die "the $SERVICE service did not start; see journalctl -u $SERVICE"
  changed+=("started $SERVICE")
fi

if [[ "${#changed[@]}" == 0 ]]; then
  say "already installed and up to date; nothing changed"
else
  for c in "${changed[@]}"; do say "$c"; done
  say "done: the agent connects to $HUB — follow it with journalctl -u $SERVICE -f"
fi
