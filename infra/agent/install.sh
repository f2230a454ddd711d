#!/usr/bin/env bash
# Installs the Volley agent from your own Volley install, exactly as Agents → Add agent prints it:
#
#   curl -fsSL https://<your volley>/install-agent.sh | bash -s -- --token <join token> \
#     --hub https://<your volley>/hub --package-url https://<your volley>/agent/volley-agent.tgz
#   ./install.sh --token <join token> --hub <url> --package-url <url> [--pool default] [--name host-1] [--labels region=eu,rack=a]
#   ./install.sh --uninstall
#
# As root it installs; otherwise it asks sudo (and says so when there is none). With systemd it runs
# the agent as the service volley-agent; without (a container, WSL, a minimal VM) it writes a
# launcher and prints the one command that runs the agent in the foreground or under your own
# supervisor. Before anything is written it asks the hub, with the agent itself (`volley-agent
# check`), whether it admits this agent: a wrong or revoked token, a hub that does not answer, a
# clock far off or an agent older than the hub accepts stops it, in words, with nothing installed.
#
# Safe to run again: the same arguments change nothing (and it says so); a new token, hub, pool or
# package upgrades in place and restarts the agent. The token is never printed, never passed on a
# command line it spawns, and lands only in an env file readable by the agent's user alone.
#
# VOLLEY_INSTALL_ROOT=/some/dir installs into a throwaway root instead of / (the tests do that).
#
# Everything below is a function called on the last line, so a download cut short runs nothing.
set -euo pipefail

volley_say() { printf 'volley-agent install: %s\n' "$*"; }
volley_die() {
  printf 'volley-agent install: error: %s\n' "$*" >&2
  exit 1
}

volley_usage() {
  cat <<'EOF'
Usage: install.sh --token <join token> --hub <url> --package-url <url> [options]
       install.sh --uninstall [--user <name>]

Installs the Volley agent from your Volley install: as the systemd service volley-agent where
systemd runs, else with a launcher to run in the foreground or under your own supervisor.

Required (install):
  --token <token>          join token from the Volley web app; "-" reads it from stdin
                           (keeps it out of your shell history and the process list)
  --hub <url>              where agents reach the hub: your Volley's address + /hub
                           (e.g. http://volley.lan:3000/hub), or the hub's own URL
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
  --no-service             do not set up a systemd service even where systemd runs: print the
                           foreground command instead (for your own supervisor)
  --skip-check             do not ask the hub first (an offline install; the agent says it at start)
  --uninstall              stop and remove the service, launcher, env file, package, state and user
  -h, --help               this help
EOF
}

volley_example_for() {
  case "$1" in
    --token) echo '<join token>' ;;
    --hub) echo 'https://volley.example.com/hub' ;;
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

# Writes stdin to $1 (mode $2, owner $3) only when the content differs; returns 0 when it wrote.
volley_write_if_changed() {
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

# One KEY="value" line: read alike by systemd's EnvironmentFile and by sh (the launcher sources it).
# Values were validated to hold no ", \, $ or ` first, so neither needs escapes.
volley_env_line() { printf '%s="%s"\n' "$1" "$2"; }

# Downloads $1 to the file $2 (curl, else wget, else Node's fetch).
volley_download() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    # shellcheck disable=SC2016 # JavaScript, not shell: the template literal is Node's.
    "$NODE_BIN" -e 'const [u, f] = process.argv.slice(1); fetch(u).then(async (r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); require("fs").writeFileSync(f, Buffer.from(await r.arrayBuffer())); }).catch((e) => { console.error(e.message); process.exit(1); });' "$1" "$2"
  fi
}

volley_install() {
  # The names apps/agent/src/env.ts reads. Keep in step with it.
  local -r ENV_HUB_URL=HUB_URL ENV_TOKEN=AGENT_TOKEN ENV_NAME=AGENT_NAME ENV_POOL=AGENT_POOL ENV_LABELS=AGENT_LABELS
  local -r ENV_MAX_CONNECTIONS=AGENT_MAX_CONNECTIONS ENV_STATE_DIR=AGENT_STATE_DIR
  local -r SERVICE=volley-agent MIN_NODE_MAJOR=20
  local ROOT="${VOLLEY_INSTALL_ROOT:-}"
  ROOT="${ROOT%/}"

  local TOKEN="" HUB="" POOL="" NAME="" LABELS="" MAX_CONNECTIONS="" PACKAGE="" PACKAGE_URL="" SVC_USER="$SERVICE"
  local UNINSTALL=0 NO_SERVICE=0 SKIP_CHECK=0
  local args=("$@")
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --token | --hub | --pool | --name | --labels | --max-connections | --package | --package-url | --user)
        [[ $# -ge 2 ]] || volley_die "$1 needs a value, e.g. $1 $(volley_example_for "$1")"
        case "$1" in
          --token) TOKEN="$2" ;;
          --hub) HUB="$2" ;;
          --pool) POOL="$2" ;;
          --name) NAME="$2" ;;
          --labels) LABELS="$2" ;;
          --max-connections) MAX_CONNECTIONS="$2" ;;
          --package) PACKAGE="$2" ;;
          --package-url) PACKAGE_URL="$2" ;;
          --user) SVC_USER="$2" ;;
        esac
        shift 2
        ;;
      --token=*) TOKEN="${1#*=}"; shift ;;
      --hub=*) HUB="${1#*=}"; shift ;;
      --pool=*) POOL="${1#*=}"; shift ;;
      --name=*) NAME="${1#*=}"; shift ;;
      --labels=*) LABELS="${1#*=}"; shift ;;
      --max-connections=*) MAX_CONNECTIONS="${1#*=}"; shift ;;
      --package=*) PACKAGE="${1#*=}"; shift ;;
      --package-url=*) PACKAGE_URL="${1#*=}"; shift ;;
      --user=*) SVC_USER="${1#*=}"; shift ;;
      --no-service) NO_SERVICE=1; shift ;;
      --skip-check) SKIP_CHECK=1; shift ;;
      --uninstall) UNINSTALL=1; shift ;;
      -h | --help) volley_usage; return 0 ;;
      *) volley_die "unknown option $1 — run with --help for the options" ;;
    esac
  done

  # ------------------------------------------------------------------------------------ root

  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      volley_say "not root: asking sudo to install into /opt/volley-agent and /etc/volley"
      # The script came through a pipe, so there is no file to re-run: hand sudo its functions.
      exec sudo -- bash -c "set -euo pipefail; $(declare -f volley_say volley_die volley_usage volley_example_for volley_write_if_changed volley_env_line volley_download volley_install); volley_install \"\$@\"" volley-install "${args[@]}"
    fi
    volley_die "must run as root to install into /opt/volley-agent and /etc/volley, and sudo is not installed here; run the same line in a root shell (su -, or sudo where it exists)"
  fi

  [[ "$SVC_USER" =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] ||
    volley_die "--user \"$SVC_USER\" is not a valid user name; use lowercase letters, digits, - and _, e.g. --user volley-agent"

  local -r ENV_DIR="$ROOT/etc/volley"
  local -r ENV_FILE="$ENV_DIR/agent.env"
  local -r UNIT_FILE="$ROOT/etc/systemd/system/$SERVICE.service"
  local -r PREFIX_DIR="$ROOT/opt/volley-agent"
  local -r STATE_DIR="$ROOT/var/lib/$SERVICE"
  local -r SPEC_FILE="$PREFIX_DIR/.installed-package"
  local -r LAUNCHER="$PREFIX_DIR/run-agent"
  # Paths as the service sees them (without the throwaway root).
  local -r LIVE_ENV_FILE="/etc/volley/agent.env"
  local -r LIVE_PREFIX="/opt/volley-agent"

  local systemd=0
  if command -v systemctl >/dev/null 2>&1 && [[ -d "$ROOT/run/systemd/system" ]]; then systemd=1; fi

  volley_user_exists() { grep -q "^$1:" "$ROOT/etc/passwd" 2>/dev/null; }
  volley_group_exists() { grep -q "^$1:" "$ROOT/etc/group" 2>/dev/null; }
  # The user and group are created in $ROOT/etc (not through NSS), so read ids from there.
  volley_user_ids() { awk -F: -v u="$1" '$1 == u { print $3 ":" $4 }' "$ROOT/etc/passwd"; }
  local prefix_args=()
  [[ -n "$ROOT" ]] && prefix_args=(--prefix "$ROOT")

  # ------------------------------------------------------------------------------- uninstall

  if [[ "$UNINSTALL" == 1 ]]; then
    local removed=0
    if [[ -f "$UNIT_FILE" ]]; then
      if [[ "$systemd" == 1 ]]; then
        systemctl disable --now "$SERVICE.service" >/dev/null 2>&1 || true
      fi
      rm -f "$UNIT_FILE"
      [[ "$systemd" == 1 ]] && systemctl daemon-reload
      volley_say "removed the $SERVICE service"
      removed=1
    fi
    if [[ -f "$ENV_FILE" ]]; then
      rm -f "$ENV_FILE"
      rmdir "$ENV_DIR" 2>/dev/null || true
      volley_say "removed $LIVE_ENV_FILE"
      removed=1
    fi
    if [[ -d "$PREFIX_DIR" ]]; then
      rm -rf "$PREFIX_DIR"
      volley_say "removed $LIVE_PREFIX"
      removed=1
    fi
    if [[ -d "$STATE_DIR" ]]; then
      rm -rf "$STATE_DIR"
      volley_say "removed /var/lib/$SERVICE (the agent's identity: installed again, it joins as a new agent)"
      removed=1
    fi
    if volley_user_exists "$SVC_USER"; then
      userdel "${prefix_args[@]}" "$SVC_USER"
      volley_say "removed user $SVC_USER"
      removed=1
    fi
    if volley_group_exists "$SVC_USER"; then
      groupdel "${prefix_args[@]}" "$SVC_USER"
      removed=1
    fi
    [[ "$removed" == 1 ]] || volley_say "nothing to remove: the Volley agent is not installed"
    return 0
  fi

  # -------------------------------------------------------------------------------- validate

  if [[ "$TOKEN" == "-" ]]; then
    IFS= read -r TOKEN || true
  fi
  [[ -n "$TOKEN" ]] ||
    volley_die "--token is required: pass the join token from the Volley web app, e.g. --token <join token> (or --token - to read it from stdin)"
  # Never echo the token, not even in an error: name the flag and the rule only.
  [[ "$TOKEN" =~ ^[A-Za-z0-9._~+/=:-]{8,4096}$ ]] ||
    volley_die "--token does not look like a join token (8 or more letters, digits and ._~+/=:- with no spaces or quotes); copy it again from the Volley web app"

  [[ -n "$HUB" ]] || volley_die "--hub is required: pass where agents reach the hub, e.g. --hub https://volley.example.com/hub"
  [[ "$HUB" =~ ^https?://[A-Za-z0-9._~%-]+(\:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$ ]] ||
    volley_die "--hub \"$HUB\" is not an http(s) URL; pass where agents reach the hub, e.g. --hub https://volley.example.com/hub or --hub http://10.0.0.5:3000/hub"
  while [[ "$HUB" == */ ]]; do HUB="${HUB%/}"; done

  [[ -z "$POOL" || "$POOL" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] ||
    volley_die "--pool \"$POOL\" is not a pool name; use lowercase letters, digits and dashes, e.g. --pool default"
  [[ -z "$NAME" || ("${#NAME}" -le 200 && "$NAME" =~ ^[A-Za-z0-9\ ._:@()+,=-]+$) ]] ||
    volley_die "--name must be 1 to 200 letters, digits, spaces and ._:@()+,=- (no quotes, \$ or backslashes), e.g. --name loadgen-1"
  if [[ -n "$LABELS" ]]; then
    local label_pairs pair
    IFS=, read -ra label_pairs <<<"$LABELS"
    for pair in "${label_pairs[@]}"; do
      [[ "$pair" =~ ^[a-z0-9]([a-z0-9._/-]{0,62})=[A-Za-z0-9._/:-]{0,63}$ ]] ||
        volley_die "--labels entry \"$pair\" is not key=value (key: lowercase letters, digits, ._/-; value: no spaces or commas), e.g. --labels region=eu,rack=a"
    done
  fi
  [[ -z "$MAX_CONNECTIONS" || "$MAX_CONNECTIONS" =~ ^[1-9][0-9]{0,8}$ ]] ||
    volley_die "--max-connections \"$MAX_CONNECTIONS\" is not a positive whole number, e.g. --max-connections 50000"
  if [[ -n "$PACKAGE_URL" ]]; then
    [[ -z "$PACKAGE" ]] || volley_die "pass either --package-url or --package, not both"
    [[ "$PACKAGE_URL" =~ ^https?://[^[:space:]\"\']+$ ]] ||
      volley_die "--package-url \"$PACKAGE_URL\" is not an http(s) URL; copy the line from the Agents page, e.g. --package-url https://volley.example.com/agent/volley-agent.tgz"
  else
    [[ -n "$PACKAGE" ]] ||
      volley_die "--package-url is required: the agent package your Volley web serves, e.g. --package-url https://volley.example.com/agent/volley-agent.tgz (the Agents page's line has it), or --package <tarball>"
    [[ "$PACKAGE" != -* ]] ||
      volley_die "--package needs a tarball path or an npm package spec, e.g. --package ./volley-agent.tgz"
  fi

  NODE_BIN="$(command -v node || true)"
  [[ -n "$NODE_BIN" ]] ||
    volley_die "Node.js $MIN_NODE_MAJOR or newer is required and none is on PATH; install it (https://nodejs.org or your distribution's nodejs package) and re-run"
  local node_version node_major=0
  node_version="$("$NODE_BIN" -p 'process.versions.node' 2>/dev/null || true)"
  [[ "$node_version" =~ ^([0-9]+)\. ]] && node_major="${BASH_REMATCH[1]}"
  [[ "$node_major" -ge "$MIN_NODE_MAJOR" ]] ||
    volley_die "Node.js $MIN_NODE_MAJOR or newer is required, found ${node_version:-an unknown version} at $NODE_BIN; upgrade it and re-run"
  command -v npm >/dev/null 2>&1 ||
    volley_die "npm is required (it comes with Node.js) and is not on PATH; install it and re-run"

  local service=1
  [[ "$systemd" == 1 && "$NO_SERVICE" == 0 ]] || service=0

  # ---------------------------------------------------------------------- package (staged)

  local changed=() restart=0 work
  work="$(mktemp -d)"
  # shellcheck disable=SC2064 # expand now: $work is local and gone when the trap runs.
  trap "rm -rf '$work' '$PREFIX_DIR.new'" EXIT

  # A tarball is identified by its content, so a rebuilt tarball at the same path is reinstalled.
  local package_id="$PACKAGE" expected_sha="" actual_sha
  if [[ -n "$PACKAGE_URL" ]]; then
    volley_download "$PACKAGE_URL.sha256" "$work/sha256" ||
      volley_die "could not download $PACKAGE_URL.sha256; check --package-url (copy it from the Agents page) and that this host reaches your Volley web"
    expected_sha="$(awk 'NR == 1 { print $1 }' "$work/sha256")"
    [[ "$expected_sha" =~ ^[0-9a-f]{64}$ ]] ||
      volley_die "$PACKAGE_URL.sha256 is not a SHA-256 checksum; check --package-url points at your Volley web's /agent/volley-agent.tgz"
    package_id="$PACKAGE_URL sha256:$expected_sha"
    PACKAGE="$work/volley-agent.tgz"
  fi
  if [[ -z "$PACKAGE_URL" && -f "$PACKAGE" ]]; then
    PACKAGE="$(cd "$(dirname "$PACKAGE")" && pwd)/$(basename "$PACKAGE")"
    package_id="$PACKAGE sha256:$(sha256sum "$PACKAGE" | cut -d' ' -f1)"
  fi
  # The new package goes into a staging directory and replaces the installed one only after the hub
  # check passed: a failed upgrade leaves the running agent as it was.
  local agent_dir="$PREFIX_DIR" new_package=0
  if [[ ! -x "$PREFIX_DIR/bin/volley-agent" || "$(cat "$SPEC_FILE" 2>/dev/null || true)" != "$package_id" ]]; then
    if [[ -n "$PACKAGE_URL" ]]; then
      volley_say "downloading $PACKAGE_URL…"
      volley_download "$PACKAGE_URL" "$PACKAGE" ||
        volley_die "could not download $PACKAGE_URL; check --package-url and that this host reaches your Volley web"
      actual_sha="$(sha256sum "$PACKAGE" | cut -d' ' -f1)"
      [[ "$actual_sha" == "$expected_sha" ]] ||
        volley_die "the download of $PACKAGE_URL does not match its checksum (sha256 $actual_sha, expected $expected_sha); it was cut short or changed on the way — run the installer again"
    fi
    volley_say "installing ${PACKAGE_URL:-$PACKAGE} (npm)…"
    rm -rf "$PREFIX_DIR.new"
    mkdir -p "$PREFIX_DIR.new"
    npm install --global --prefix "$PREFIX_DIR.new" --no-audit --no-fund --loglevel=error "$PACKAGE" >&2 ||
      volley_die "npm could not install ${PACKAGE_URL:-$PACKAGE}; check that this host reaches the npm registry (the agent's third-party dependencies come from it)"
    [[ -x "$PREFIX_DIR.new/bin/volley-agent" ]] ||
      volley_die "${PACKAGE_URL:-$PACKAGE} installed no volley-agent command; pass the Volley agent package (--package-url from the Agents page)"
    printf '%s\n' "$package_id" >"$PREFIX_DIR.new/.installed-package"
    agent_dir="$PREFIX_DIR.new"
    new_package=1
  fi

  # ---------------------------------------------------------------------------- the env file

  local env_text
  env_text="$(
    echo "# Written by the Volley agent installer; re-run it to change these."
    volley_env_line "$ENV_HUB_URL" "$HUB"
    volley_env_line "$ENV_TOKEN" "$TOKEN"
    [[ -n "$POOL" ]] && volley_env_line "$ENV_POOL" "$POOL"
    [[ -n "$NAME" ]] && volley_env_line "$ENV_NAME" "$NAME"
    [[ -n "$LABELS" ]] && volley_env_line "$ENV_LABELS" "$LABELS"
    [[ -n "$MAX_CONNECTIONS" ]] && volley_env_line "$ENV_MAX_CONNECTIONS" "$MAX_CONNECTIONS"
    # Under systemd the unit's StateDirectory= names it; elsewhere the launcher needs to be told.
    # The same directory the hub check below keeps the agent's identity in: one agent, one row.
    [[ "$service" == 0 ]] && volley_env_line "$ENV_STATE_DIR" "$STATE_DIR"
    true
  )"

  # ------------------------------------------------------------------------- ask the hub first

  local env_changed=0
  [[ "$(cat "$ENV_FILE" 2>/dev/null || true)" == "$env_text" ]] || env_changed=1
  if [[ "$SKIP_CHECK" == 0 && ("$new_package" == 1 || "$env_changed" == 1) ]]; then
    volley_say "asking the hub at $HUB whether it admits this agent…"
    mkdir -p "$STATE_DIR"
    local check_out
    # The token reaches the agent through its environment, never its command line.
    if ! check_out="$(
      export HUB_URL="$HUB" AGENT_TOKEN="$TOKEN" AGENT_STATE_DIR="$STATE_DIR" LOG_LEVEL=error
      [[ -n "$POOL" ]] && export AGENT_POOL="$POOL"
      [[ -n "$NAME" ]] && export AGENT_NAME="$NAME"
      "$NODE_BIN" "$agent_dir/bin/volley-agent" check 2>&1
    )"; then
      # Nothing was written yet: a fresh install leaves no trace, an upgrade leaves the old agent running.
      [[ -f "$ENV_FILE" ]] || rm -rf "$STATE_DIR"
      volley_die "${check_out#volley-agent check: } — nothing was installed or changed"
    fi
    volley_say "${check_out#volley-agent check: }"
  fi

  # ------------------------------------------------------------------------------- install

  local owner="0:0"
  if [[ "$service" == 1 ]]; then
    if ! volley_user_exists "$SVC_USER"; then
      useradd "${prefix_args[@]}" --system --user-group --no-create-home \
        --home-dir "/var/lib/$SERVICE" --shell /usr/sbin/nologin "$SVC_USER"
      changed+=("created system user $SVC_USER")
    fi
    owner="$(volley_user_ids "$SVC_USER")"
    [[ -n "$owner" ]] || volley_die "user $SVC_USER exists but has no entry in $ROOT/etc/passwd; remove it or pick another with --user"
  fi

  if [[ "$new_package" == 1 ]]; then
    rm -rf "$PREFIX_DIR.old"
    [[ -d "$PREFIX_DIR" ]] && mv "$PREFIX_DIR" "$PREFIX_DIR.old"
    mv "$PREFIX_DIR.new" "$PREFIX_DIR"
    rm -rf "$PREFIX_DIR.old"
    changed+=("installed ${PACKAGE_URL:-$PACKAGE}")
    restart=1
  fi

  mkdir -p "$STATE_DIR"
  chown -R "$owner" "$STATE_DIR"
  mkdir -p "$ENV_DIR"
  chmod 0755 "$ENV_DIR"
  local old_env
  old_env="$(cat "$ENV_FILE" 2>/dev/null || true)"
  if printf '%s\n' "$env_text" | volley_write_if_changed "$ENV_FILE" 600 "$owner"; then
    if [[ -z "$old_env" ]]; then
      changed+=("wrote $LIVE_ENV_FILE (mode 0600)")
    elif [[ "$(grep "^$ENV_TOKEN=" <<<"$old_env" || true)" != "$(volley_env_line "$ENV_TOKEN" "$TOKEN" | tr -d '\n')" ]]; then
      changed+=("updated $LIVE_ENV_FILE (new token)")
    else
      changed+=("updated $LIVE_ENV_FILE")
    fi
    restart=1
  fi

  # The foreground command, service or not: what a supervisor (or a person) runs.
  if volley_write_if_changed "$LAUNCHER" 755 0:0 <<EOF; then
#!/bin/sh
# Written by the Volley agent installer: runs the agent in the foreground with $LIVE_ENV_FILE.
# Ctrl-C (SIGINT) or SIGTERM stops it after it flushes what it measured.
set -a
. "$ENV_FILE"
set +a
mkdir -p "\${AGENT_STATE_DIR:-$STATE_DIR}"
exec "$NODE_BIN" "$PREFIX_DIR/bin/volley-agent" daemon
EOF
    [[ "$service" == 1 ]] || changed+=("wrote the launcher $LIVE_PREFIX/run-agent")
  fi

  if [[ "$service" == 0 ]]; then
    if [[ "${#changed[@]}" == 0 ]]; then
      volley_say "already installed and up to date; nothing changed"
    else
      local c
      for c in "${changed[@]}"; do volley_say "$c"; done
    fi
    if [[ "$systemd" == 0 ]]; then
      volley_say "systemd is not running here (a container, WSL or a minimal VM), so no service was set up."
    else
      volley_say "--no-service: no systemd service was set up."
    fi
    volley_say "start the agent in the foreground (Ctrl-C stops it), or give this command to your own supervisor (supervisord, runit, s6, a container's CMD):"
    printf '\n    %s\n\n' "$LAUNCHER"
    [[ "$restart" == 1 && -f "$ENV_FILE" && -n "$old_env" ]] && volley_say "an agent already running from here keeps its old settings until you restart it"
    return 0
  fi

  local unit_changed=0
  mkdir -p "$(dirname "$UNIT_FILE")"
  if volley_write_if_changed "$UNIT_FILE" 644 0:0 <<EOF; then
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
    systemctl enable "$SERVICE.service" >/dev/null 2>&1 || volley_die "systemctl enable $SERVICE failed; see systemctl status $SERVICE"
    changed+=("enabled $SERVICE at boot")
  fi
  if [[ "$restart" == 1 ]] || ! systemctl is-active --quiet "$SERVICE.service" 2>/dev/null; then
    systemctl restart "$SERVICE.service" || volley_die "the $SERVICE service did not start; see journalctl -u $SERVICE"
    changed+=("started $SERVICE")
  fi

  if [[ "${#changed[@]}" == 0 ]]; then
    volley_say "already installed and up to date; nothing changed"
  else
    local c
    for c in "${changed[@]}"; do volley_say "$c"; done
    volley_say "done: the agent connects to $HUB — follow it with journalctl -u $SERVICE -f"
  fi
}

volley_install "$@"
