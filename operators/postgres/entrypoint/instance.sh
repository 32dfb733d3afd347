#!/usr/bin/env bash
# The PostgreSQL container's command in every PostgreSQLCluster pod, and the program the tests run
# as a plain process. It prepares the data directory for the role it is given, then execs postgres:
#   primary: initdb + credentials + replication user on an empty volume, else start what is there;
#   replica: pg_basebackup from the primary on an empty volume; a former primary (no standby.signal)
#            is rewound with pg_rewind, falling back to a fresh clone; then standby.signal,
#            primary_conninfo and a replication slot on the primary.
# It never promotes anything: promotion is the failover engine's decision, made after fencing.
# Inputs are environment variables and mounted files only (see operators/postgres/README.md).
# Bash and the PostgreSQL client/server binaries are all it needs: the official postgres image has
# no Node.js.
set -Eeuo pipefail

log() { echo "homeostat-entrypoint[${INSTANCE_NAME:-?}]: $*" >&2; }
# Why the container stopped, where the kubelet reads it (terminationMessagePath): the operator
# shows it in the cluster's status and an Event instead of leaving the pod to crash-loop unexplained.
# A message never holds a secret.
die() {
  log "error: $*"
  printf '%s\n' "$*" >"${PG_TERMINATION_LOG:-/dev/termination-log}" 2>/dev/null || true
  exit 1
}
require() { # require <variable name>: the variable must be set and non-empty
  [[ -n "${!1:-}" ]] || die "environment variable $1 is required"
}
read_secret() { # read_secret <dir> <key>: a mounted Secret's key, without a trailing newline
  local file="$1/$2"
  [[ -r "$file" ]] || die "secret file $file is missing or unreadable"
  local value
  value="$(<"$file")"
  [[ -n "$value" ]] || die "secret file $file is empty"
  printf '%s' "$value"
}
sql_literal() { printf "'%s'" "${1//\'/\'\'}"; }
sql_identifier() { printf '"%s"' "${1//\"/\"\"}"; }
pgpass_field() { # backslash and colon must be escaped in a pgpass line
  local v="${1//\\/\\\\}"
  printf '%s' "${v//:/\\:}"
}

if [[ -n "${PG_BIN:-}" ]]; then PATH="$PG_BIN:$PATH"; fi

# The kubelet stops a container with the image's STOPSIGNAL (SIGINT) sent to its main process only.
# A bash script with no trap ignores a SIGINT that reaches it while a foreground child (a sleep)
# runs on, so the container would live out the pod's whole grace period (30 s): every switchover
# and rolling restart paid that while the old pod went away. The loops below sleep in the
# background and `wait`, which a trapped signal interrupts at once.
stop_on_signal() { # stop_on_signal <who>: log and exit on SIGTERM or SIGINT
  # shellcheck disable=SC2064 # <who> is expanded now, on purpose
  trap "log 'stopping on a signal ($1)'; exit 0" TERM INT
}
nap() { # nap <seconds>: a sleep a trapped signal cuts short
  sleep "$1" &
  wait "$!" || true
}

# Fencing on request (ADR 0223): PG_FENCE_FILE is the pod's postgres.homeostat.dev/fenced
# annotation, which the kubelet keeps current in a downward API volume. While it says `true`, the
# self-fence container stops PostgreSQL (a fast shutdown: the standbys get the last WAL) and the
# entrypoint neither starts it nor touches the data; the pod stays, never Ready.
fenced_on_request() { [[ -n "${PG_FENCE_FILE:-}" && "$(cat "$PG_FENCE_FILE" 2>/dev/null)" == "true" ]]; }

# Self-fencing, run as `homeostat-instance self-fence` by a second container of the instance pod
# (same network, process and run-directory namespaces, the same data volume). A primary that can
# reach neither the API server nor any other instance for PG_SELF_FENCE_MS is cut off: it is
# stopped at once, and a marker in the run directory keeps the entrypoint from starting it as a
# primary again until it can reach them. The operator cannot fence a primary its kubelet cannot
# reach; this is how such a primary stops taking writes on its own before a replica is promoted.
#
# Reaching is connecting: a TCP connection to the API server (KUBERNETES_SERVICE_HOST and _PORT,
# which the kubelet gives every container; no credentials needed) or pg_isready to a peer. A DNS
# answer proves nothing once a node-local DNS cache answers from memory through a partition, so
# the cluster DNS counts only until the API server has answered once: where egress to it is
# blocked (a NetworkPolicy), the watcher keeps the DNS check rather than stop a healthy primary.
#
# A primary that knows no other instance (a one-instance cluster, or every replica's pod gone from
# the headless Service) is never stopped: no failover could replace it, so stopping it would only
# turn an API server or network outage into a database outage. Only an answer naming some address
# changes what it knows: a lookup cut off halfway answers nothing, and forgets no peer.
#
# Timing (the operator promotes no sooner than 2 s after it first sees the primary fail, which is
# after the cut, and counts on this): a check asks the DNS and every known peer at once, and the
# API server at once too unless a peer answered the last check (then only if no peer answers
# within 250 ms, bounded so the check still ends within the second), each bounded by 1 s; checks
# follow each other 250 ms apart; the first failing check begins at most 250 ms after the cut,
# and with PG_SELF_FENCE_MS at 1000 the primary is stopped as that check ends, about 1.3 s after
# the cut, plus the immediate stop itself.
now_ms() { # wall clock in milliseconds (EPOCHREALTIME: seconds with microseconds)
  local micros="${EPOCHREALTIME/[.,]/}"
  printf '%s' "$((micros / 1000))"
}
self_fence_watch() {
  require PGDATA
  require PG_PEERS_HOST # the headless Service: every instance's address, ready or not
  local after_ms="${PG_SELF_FENCE_MS:-1000}" run="${PG_RUN_DIR:-/var/run/postgresql}"
  local marker="$run/self-fenced" since="" peers="" own api_answered="" peer_answered=""
  local api_host="${KUBERNETES_SERVICE_HOST:-}" api_port="${KUBERNETES_SERVICE_PORT:-443}"
  own="$(getent hosts "$HOSTNAME" | awk '{print $1; exit}' || true)" # from the pod's /etc/hosts
  reachable() {
    # The API server or any other instance answering a connection means this pod's network
    # works. Asked at once with the DNS lookup, so a failing check lasts 1 s, not more.
    local peer pids=() pid answered=1 dns api="" timer finished status pending=() peer_now="" answer
    timeout 1 getent hosts kubernetes.default.svc >/dev/null 2>&1 &
    dns="$!"
    for peer in $peers; do
      timeout 1 pg_isready -q -h "$peer" -p "${PGPORT:-5432}" -t 1 &
      pids+=("$!")
    done
    # The API server only when no peer answers: a bare TCP connection that closes without TLS is
    # a handshake error in the API server's log, four times a second from every primary. A peer
    # that answered the last check is given a quarter of a second to answer this one; past that
    # (or with no peer answering last time) the API server is asked too, within the same second,
    # so a cut is still seen in one check and a primary that reaches the API server alone is
    # still never stopped.
    pending=("${pids[@]}")
    if [[ -n "$peer_answered" ]]; then
      sleep 0.25 &
      timer="$!"
      while ((${#pending[@]})); do
        finished=""
        wait -n -p finished "${pending[@]}" "$timer" && status=0 || status=$?
        [[ -n "$finished" && "$finished" != "$timer" ]] || break
        for pid in "${!pending[@]}"; do [[ "${pending[$pid]}" != "$finished" ]] || unset "pending[$pid]"; done
        if ((status == 0)); then
          peer_now=yes
          break
        fi
      done
      kill "$timer" 2>/dev/null || true
      wait "$timer" 2>/dev/null || true
    fi
    if [[ -z "$peer_now" && -n "$api_host" ]]; then
      # shellcheck disable=SC2016 # expanded by the inner bash, which opens the connection
      timeout "$([[ -n "$peer_answered" ]] && echo 0.75 || echo 1)" bash -c ': >"/dev/tcp/$0/$1"' "$api_host" "$api_port" 2>/dev/null &
      api="$!"
    fi
    if [[ -n "$api" ]] && wait "$api"; then
      answered=0
      api_answered=yes
    fi
    if wait "$dns"; then
      # Evidence only until the API server has answered once (see above): a cache answers too.
      [[ -n "$api_answered" ]] || answered=0
      # The peers' addresses, for the time the DNS does not answer. A lookup that names no address
      # at all did not answer (this instance's own pod is always in the headless Service, ready or
      # not): a cut that lands between the two lookups must not forget the peers it cuts off.
      answer="$(timeout 1 getent ahostsv4 "$PG_PEERS_HOST" 2>/dev/null | awk '{print $1}' | sort -u || true)"
      [[ -z "$answer" ]] || peers="$(grep -vxF "${own:-none}" <<<"$answer" || true)"
    fi
    for pid in "${pending[@]}"; do wait "$pid" && peer_now=yes; done
    peer_answered="$peer_now"
    [[ -z "$peer_now" ]] || answered=0
    return "$answered"
  }
  log "self-fence: watching (a cut-off primary stops after ${after_ms} ms)"
  stop_on_signal self-fence
  local checked_at
  while nap 0.25; do
    if fenced_on_request; then
      since=""
      if pg_ctl status -D "$PGDATA" >/dev/null 2>&1; then
        log "fenced on request: stopping PostgreSQL (fast shutdown); it stays stopped until the instance is unfenced"
        pg_ctl stop -D "$PGDATA" -m fast -w -t 60 >/dev/null 2>&1 || true
      fi
      continue
    fi
    checked_at="$(now_ms)" # a failed check counts from when it began
    if [[ ! -s "$PGDATA/PG_VERSION" || -e "$PGDATA/standby.signal" ]] || reachable; then
      since=""
      if [[ -e "$marker" ]]; then
        log "self-fence: no longer cut off (or no longer a primary); the instance may start again"
        rm -f "$marker"
      fi
      continue
    fi
    if [[ -z "$peers" ]]; then
      [[ -n "$since" ]] || log "self-fence: cut off, but no other instance is known that could take over; this primary keeps running"
      since="${since:-$checked_at}"
      continue
    fi
    since="${since:-$checked_at}"
    if (($(now_ms) - since >= after_ms)); then
      if [[ ! -e "$marker" ]]; then
        log "self-fence: this primary has reached neither the API server (or, until it first answered, the cluster DNS) nor another instance for ${after_ms} ms; stopping it"
        touch "$marker"
      fi
      pg_ctl stop -D "$PGDATA" -m immediate -w -t 5 >/dev/null 2>&1 || true
    fi
  done
}
if [[ "${1:-}" == "self-fence" ]]; then
  self_fence_watch
  exit 1
fi
# pgBackRest's configuration as the operator rendered it (no credential in it: those are in the
# environment, from the user's Secret), in the run directory where archive_command looks for it.
write_backup_config() {
  [[ -n "${PG_BACKREST_CONFIG:-}" ]] || return 0
  require PG_BACKREST_CONFIG_FILE
  mkdir -p "$(dirname "$PG_BACKREST_CONFIG_FILE")"
  printf '%s\n' "$PG_BACKREST_CONFIG" >"$PG_BACKREST_CONFIG_FILE.tmp"
  mv "$PG_BACKREST_CONFIG_FILE.tmp" "$PG_BACKREST_CONFIG_FILE"
}

# The first line of a pgBackRest failure that says why, with every credential value taken out:
# pgBackRest quotes the S3 server's error body, which can name the access key id.
backup_failure_reason() {
  local line value
  line="$(grep -m1 -oE 'ERROR: \[[0-9]+\]: [^<]*' <<<"$1" || true)"
  [[ -n "$line" ]] || line="no reason printed"
  for value in "${PGBACKREST_REPO1_S3_KEY:-}" "${PGBACKREST_REPO1_S3_KEY_SECRET:-}" "${PGBACKREST_REPO1_S3_TOKEN:-}" \
    "${PGBACKREST_REPO2_S3_KEY:-}" "${PGBACKREST_REPO2_S3_KEY_SECRET:-}" "${PGBACKREST_REPO2_S3_TOKEN:-}"; do
    [[ -n "$value" ]] && line="${line//"$value"/<redacted>}"
  done
  printf '%s' "${line:0:240}"
}

# A base backup, run as `homeostat-instance backup` by the pod of a PostgreSQLBackup (ADR 0215):
# pgBackRest as the repository host, reading the files over TLS from the pgBackRest server of a
# standby (or of the primary) its configuration names. The answer is the termination message, which
# the operator reads: the new backup's record as `pgbackrest info` prints it (JSON, under 1 KiB),
# or why it failed with every credential value taken out. Only its own summary reaches the log:
# pgBackRest can quote the S3 server's error body.
take_backup() {
  require PG_BACKREST_CONFIG
  require PG_BACKREST_CONFIG_FILE
  require PG_BACKREST_STANZA
  local output label info
  local tool=(pgbackrest --config="$PG_BACKREST_CONFIG_FILE" --stanza="$PG_BACKREST_STANZA")
  write_backup_config
  log "backup: a full backup of stanza $PG_BACKREST_STANZA begins"
  if ! output="$("${tool[@]}" backup --type=full 2>&1)"; then
    # Why each instance it could not use was left out says more than the error that follows.
    local hosts value
    hosts="$(grep -oE 'WARN: unable to check pg[0-9]+: [^<]*' <<<"$output" | cut -c7- | paste -sd ';' - || true)"
    for value in "${PGBACKREST_REPO1_S3_KEY:-}" "${PGBACKREST_REPO1_S3_KEY_SECRET:-}" "${PGBACKREST_REPO1_S3_TOKEN:-}"; do
      [[ -n "$value" ]] && hosts="${hosts//"$value"/<redacted>}"
    done
    die "backup failed: $(backup_failure_reason "$output")${hosts:+ (${hosts:0:600})}"
  fi
  label="$(grep -m1 -oE 'new backup label = [0-9A-Za-z_-]+' <<<"$output" | awk '{print $NF}' || true)"
  [[ -n "$label" ]] || die "backup: pgbackrest ended well but printed no backup label"
  if ! info="$("${tool[@]}" --log-level-console=error info --set="$label" --output=json 2>&1)"; then
    die "backup $label was taken, but reading its record failed: $(backup_failure_reason "$info")"
  fi
  printf '%s' "$info" >"${PG_TERMINATION_LOG:-/dev/termination-log}"
  log "backup: $label taken"
}
if [[ "${1:-}" == "backup" ]]; then
  take_backup
  exit 0
fi

# Retention (ADR 0216), run as `homeostat-instance expire` by the short pod the operator starts
# after a scheduled backup succeeded: expires each backup the operator names in
# PG_BACKREST_EXPIRE_SETS (its policy chose them; never the newest), then the WAL older than the
# oldest backup left in the repository, whoever took it, so every backup still listed keeps the WAL
# a restore to any moment after it needs. A label the repository no longer lists was expired by an
# earlier run that stopped before the operator read its answer: it is skipped, so a second run is
# harmless. The answer is the termination message: what was expired, or why not, redacted.
expire_backups() {
  require PG_BACKREST_CONFIG
  require PG_BACKREST_CONFIG_FILE
  require PG_BACKREST_STANZA
  require PG_BACKREST_EXPIRE_SETS
  local tool=(pgbackrest --config="$PG_BACKREST_CONFIG_FILE" --stanza="$PG_BACKREST_STANZA")
  local info output label kept expired=()
  write_backup_config
  # info exits 0 on a repository it could not read and says so in its JSON (a status code other
  # than 0, ok, or 2, no backups): then no label can be told missing, and nothing is expired.
  read_info() {
    local text code message value
    text="$("${tool[@]}" --log-level-console=error info --output=json 2>&1)" ||
      die "expire: reading the repository failed: $(backup_failure_reason "$text")"
    for code in $(grep -oE '"code": ?[0-9]+' <<<"$text" | grep -oE '[0-9]+$' || true); do
      [[ "$code" == 0 || "$code" == 2 ]] && continue
      message="$(grep -oE '"message": ?"[^"]*"' <<<"$text" | sed -E 's/^"message": ?"//; s/"$//' |
        grep -vxE 'ok|no valid backups' | head -n1 || true)"
      for value in "${PGBACKREST_REPO1_S3_KEY:-}" "${PGBACKREST_REPO1_S3_KEY_SECRET:-}" "${PGBACKREST_REPO1_S3_TOKEN:-}"; do
        [[ -n "$value" ]] && message="${message//"$value"/<redacted>}"
      done
      die "expire: pgbackrest info could not read the repository (code $code): ${message:0:300}; nothing expired"
    done
    printf '%s' "$text"
  }
  info="$(read_info)" || exit 1
  for label in $PG_BACKREST_EXPIRE_SETS; do
    # Only a label as pgBackRest writes it reaches the command line.
    [[ "$label" =~ ^[0-9]{8}-[0-9]{6}F(_[0-9]{8}-[0-9]{6}[DI])?$ ]] || die "expire: '${label:0:40}' is not a backup label"
    if ! grep -qE "\"label\": ?\"$label\"" <<<"$info"; then
      log "expire: $label is not in the repository (expired already)"
      continue
    fi
    if ! output="$("${tool[@]}" expire --set="$label" 2>&1)"; then
      die "expire of $label failed${expired[*]:+ (after ${expired[*]})}: $(backup_failure_reason "$output")"
    fi
    expired+=("$label")
    log "expire: $label expired"
  done
  info="$(read_info)" || exit 1
  kept="$(grep -oE '"label": ?"' <<<"$info" | wc -l || true)"
  if ((kept > 0)); then
    # The WAL of as many full backups as are listed: the tool keeps everything from the oldest
    # one's start and removes only what is older, which no listed backup needs.
    if ! output="$("${tool[@]}" expire --repo1-retention-archive-type=full --repo1-retention-archive="$kept" 2>&1)"; then
      die "expire of the WAL before the oldest of $kept backups failed: $(backup_failure_reason "$output")"
    fi
  fi
  printf 'expired %s; %s backups left' "${expired[*]:-nothing}" "$kept" >"${PG_TERMINATION_LOG:-/dev/termination-log}"
  log "expire: ${expired[*]:-nothing} expired; $kept backups left"
}
if [[ "${1:-}" == "expire" ]]; then
  expire_backups
  exit 0
fi

wipe_data_dir() {
  mkdir -p "$PGDATA"
  find "$PGDATA" -mindepth 1 -delete
  chmod 700 "$PGDATA"
}

# What a restore from PG_RECOVERY_* restores, in words.
recovery_description() {
  printf '%s of %s, to %s' "${PG_RECOVERY_SET:-the newest backup that fits}" "$PG_RECOVERY_STANZA" \
    "${PG_RECOVERY_TARGET:-the end of its archive}"
}

# Restores the backup PG_RECOVERY_* names into an emptied $PGDATA (pgBackRest chooses it for a
# time or LSN target, and writes the recovery settings), lets <settings> write the server's
# configuration, and starts a private server (no TCP, the socket in <dir>, archiving off: nothing
# it does reaches any repository; no hot standby, which would stop the replay at the first setting
# below the source's, such as a smaller max_connections) that replays to the target and is
# promoted; returns once it is,
# the server still running. Sets restored_label. On failure returns 1 with $PGDATA emptied and
# replay_failure saying why (credential values taken out). Used by the first instance of a
# recovered cluster (ADR 0217) and by a restore drill (ADR 0218).
restore_and_replay() { # restore_and_replay <settings function> <dir>
  restore_backup "$1" "$2" || return 1
  start_private_server "$2" off
  await_replay "$2" promoted
}

# The first half of restore_and_replay: the restore and <settings>, no server started.
restore_backup() { # restore_backup <settings function> <dir>
  local settings="$1" dir="$2" type="${PG_RECOVERY_TARGET_TYPE:-default}" output
  require PG_RECOVERY_CONFIG
  require PG_RECOVERY_CONFIG_FILE
  require PG_RECOVERY_STANZA
  local tool=(pgbackrest --config="$PG_RECOVERY_CONFIG_FILE" --stanza="$PG_RECOVERY_STANZA")
  local args=(restore --log-level-console=info)
  [[ -n "${PG_RECOVERY_SET:-}" ]] && args+=(--set="$PG_RECOVERY_SET")
  case "$type" in
    default) ;;
    time | lsn | name)
      require PG_RECOVERY_TARGET
      args+=(--type="$type" --target="$PG_RECOVERY_TARGET" --target-action=promote)
      ;;
    *) die "PG_RECOVERY_TARGET_TYPE must be default, time, lsn or name, not '$type'" ;;
  esac
  wipe_data_dir
  mkdir -p "$(dirname "$PG_RECOVERY_CONFIG_FILE")" "$dir"
  printf '%s\n' "$PG_RECOVERY_CONFIG" >"$PG_RECOVERY_CONFIG_FILE"
  if ! output="$("${tool[@]}" "${args[@]}" 2>&1)"; then
    wipe_data_dir
    replay_failure="recovery from $PG_RECOVERY_STANZA failed: $(backup_failure_reason "$output")"
    return 1
  fi
  restored_label="$(grep -m1 -oE 'restore backup set [0-9A-Za-z_-]+' <<<"$output" | awk '{print $NF}' || true)"
  "$settings"
}

# The private server on the restored data: no TCP, its socket in <dir>, archiving off; hot_standby
# as asked (on only where queries must run during the replay: a drill's count at a position).
start_private_server() { # start_private_server <dir> <on|off>
  log "recovery: replaying the archived WAL (a private server on $1)"
  pg_ctl -D "$PGDATA" -l "$1/server.log" -w -t 3600 \
    -o "-c listen_addresses='' -c unix_socket_directories='$1' -c archive_mode=off -c hot_standby=$2" \
    start >/dev/null 2>&1 || true
}

# Waits until the private server's replay is promoted (the end of the archive or the target) or
# paused (at a recovery target with recovery_target_action = pause, hot_standby on). Returns 1 with
# $PGDATA emptied and replay_failure saying why when the server exits first.
await_replay() { # await_replay <dir> <promoted|paused>
  local dir="$1" want="$2" state fatal
  while :; do
    if [[ "$want" == promoted ]]; then
      state="$(pg_controldata -D "$PGDATA" 2>/dev/null | sed -n 's/^Database cluster state: *//p')"
      [[ "$state" == "in production" ]] && return 0
    else
      state="$(psql -X -At -h "$dir" -p "${PGPORT:-5432}" -U "${PG_DRILL_USER:-postgres}" -d postgres \
        -c 'SELECT pg_get_wal_replay_pause_state()' 2>/dev/null || true)"
      [[ "$state" == paused ]] && return 0
    fi
    if ! pg_ctl -D "$PGDATA" status >/dev/null 2>&1; then
      fatal="$(grep -E '(FATAL|PANIC):' "$dir/server.log" | tail -1 | sed -E 's/^.*(FATAL|PANIC): +//')"
      cat "$dir/server.log" >&2 || true
      if [[ "$want" == promoted ]]; then
        wipe_data_dir
        replay_failure="recovery of $(recovery_description) stopped before promotion: ${fatal:-the server exited}"
      else
        # Kept: the drill reads from the control file and the log where the replay ended.
        replay_failure="recovery of $(recovery_description) stopped before pausing at its target: ${fatal:-the server exited}"
      fi
      return 1
    fi
    nap 1
  done
}

# A restore drill (ADR 0218), run as `homeostat-instance drill` by a short-lived pod with a claim of
# its own: the newest backup of the cluster's own repository and every archived segment after it
# are restored and replayed in a private server, as a recovery would; then the replay must have
# reached the archive's last segment (a missing or unreadable segment stops it earlier, and is
# named), pg_amcheck must find every table and index sound, and each database's tables and rows
# are counted. The answer is the termination message: a JSON record, or why the drill failed.
# Nothing leaves the pod: no TCP, archiving off, the repository only read.
drill_settings() { # the restored copy's own server settings, last, over whatever the backup holds
  local conf="$PGDATA/homeostat.conf"
  {
    echo "# Written by a homeostat restore drill."
    echo "listen_addresses = ''"
    echo "ssl = off"
    echo "archive_mode = off"
    # Nothing connects before the promotion; on, the replay would stop at the first setting below
    # the source's (max_connections, max_wal_senders...), which this file no longer sets.
    echo "hot_standby = off"
    echo "logging_collector = off"
    echo "shared_preload_libraries = ''"
  } >"$conf"
  grep -q "^include_if_exists = 'homeostat.conf'" "$PGDATA/postgresql.conf" ||
    echo "include_if_exists = 'homeostat.conf'" >>"$PGDATA/postgresql.conf"
  # Only this pod's own socket, and nothing else, reaches the private server.
  printf 'local all all trust\n' >"$PGDATA/pg_hba.conf"
}
# The same, and the replay stops just before the first record at or after PG_DRILL_COUNT_LSN (the
# state the source's paused standby showed there) and waits, answering queries (ADR 0221). A hot
# standby stops at any setting below the source's, so those take the values the restored control
# file records (the source's when the backup was taken).
drill_settings_at_count() {
  drill_settings
  local controldata name setting value
  controldata="$(pg_controldata -D "$PGDATA")"
  {
    echo "hot_standby = on"
    echo "recovery_target_lsn = '$PG_DRILL_COUNT_LSN'"
    echo "recovery_target_inclusive = off"
    echo "recovery_target_action = pause"
    for name in max_connections max_worker_processes max_wal_senders max_prepared_xacts max_locks_per_xact; do
      value="$(sed -n "s/^$name setting: *//p" <<<"$controldata")"
      [[ "$value" =~ ^[0-9]+$ ]] || continue
      setting="${name/max_prepared_xacts/max_prepared_transactions}"
      echo "${setting/max_locks_per_xact/max_locks_per_transaction} = $value"
    done
  } >>"$PGDATA/homeostat.conf"
}
# Counts each database (the first 20) with PG_DRILL_COUNT_SQL, the operator's query: one row of
# tables, rows and a digest of the per-table counts. An operator from before ADR 0221 gives no
# query: then every user table's rows are totalled, without a digest. Prints the JSON list; fails
# on any error.
count_databases_with_query() { # count_databases_with_query <psql command...>
  local databases="" db tables rows digest name query="${PG_DRILL_COUNT_SQL:-}"
  [[ -n "$query" ]] || query="SELECT count(*), coalesce(sum((xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I', schemaname, relname), false, true, '')))[1]::text::bigint), 0), '' FROM pg_stat_user_tables"
  while IFS= read -r db; do
    [[ -n "$db" ]] || continue
    IFS='|' read -r tables rows digest < <("$@" -d "$db" -F '|' -c "$query") || return 1
    [[ "$tables" =~ ^[0-9]+$ && "$rows" =~ ^[0-9]+$ && "$digest" =~ ^([0-9a-f]{32})?$ ]] || return 1
    name="${db//\\/\\\\}"
    name="${name//\"/\\\"}"
    databases+="${databases:+,}{\"name\":\"$name\",\"tables\":$tables,\"rows\":$rows${digest:+,\"digest\":\"$digest\"}}"
  done < <("$@" -d postgres -c "SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname LIMIT 20")
  printf '%s' "$databases"
}
# Fails the drill, naming the first segment that could not be restored, when the replay that ended
# in segment <replayed> stopped before the archive's last segment; sets archive_end.
fail_on_archive_gap() { # fail_on_archive_gap <replayed segment>
  local replayed="$1" info next
  info="$(pgbackrest --config="$PG_RECOVERY_CONFIG_FILE" --stanza="$PG_RECOVERY_STANZA" --log-level-console=error info --output=json 2>&1)" ||
    drill_failed "reading the archive's range: $(backup_failure_reason "$info")"
  archive_end="$(grep -oE '"max":"[0-9A-F]{24}"' <<<"$info" | tail -1 | cut -d'"' -f4)"
  # The same segment number (the last 16 hex digits) on any timeline: the replay ends on the
  # promoted copy's new timeline, the archive on the source's.
  if [[ -n "$archive_end" && "${replayed: -16}" < "${archive_end: -16}" ]]; then
    next="$(printf '%08X%08X' "$((16#${replayed:8:8} + (16#${replayed:16:8} == 255 ? 1 : 0)))" "$(((16#${replayed:16:8} + 1) % 256))")"
    drill_failed "the replay stopped in WAL segment ${replayed:0:8}${replayed:8:16} but the archive goes to $archive_end: segment ${archive_end:0:8}$next is missing or unreadable, so nothing after it can be restored"
  fi
}
# The segment holding the byte before <lsn> on <timeline> (16 MiB segments, as the arithmetic of
# fail_on_archive_gap assumes): where a replay that ended at <lsn> last read.
walfile_before() { # walfile_before <timeline> <lsn>
  local lsn="$2" position segment
  position=$(((16#${lsn%/*} << 32 | 16#${lsn#*/}) - 1))
  segment=$((position / 16777216))
  printf '%08X%08X%08X' "$1" $((segment / 256)) $((segment % 256))
}
run_drill() {
  require PGDATA
  require PG_DRILL_USER
  local dir="${PG_RUN_DIR:-/tmp}/drill" started=$SECONDS port="${PGPORT:-5432}" restore_seconds
  local psql=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U "$PG_DRILL_USER")
  # From here the private server may run: a failed check stops it before saying why (in a pod the
  # container's end would, but nothing else must outlive the drill).
  drill_failed() {
    pg_ctl -D "$PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
    die "drill failed: $*"
  }
  log "drill: restoring $(recovery_description)"
  local counted_at="" counts_at="" count_started count_seconds=0
  if [[ -n "${PG_DRILL_COUNT_LSN:-}" ]]; then
    # The source was counted at this position (ADR 0221): the copy stops there first and counts
    # with the same query, then a restart without the target replays the rest of the archive.
    [[ "$PG_DRILL_COUNT_LSN" =~ ^[0-9A-F]{1,8}/[0-9A-F]{1,8}$ ]] || die "drill failed: '${PG_DRILL_COUNT_LSN:0:40}' is not a WAL position"
    require PG_DRILL_COUNT_SQL
    restore_backup drill_settings_at_count "$dir" || die "drill failed: $replay_failure"
    start_private_server "$dir" on
    if ! await_replay "$dir" paused; then
      # A segment missing before L ends the replay there ("recovery ended before configured
      # recovery target was reached"): named as a drill without a count names it.
      local redo_done timeline
      redo_done="$(sed -nE 's/^.*LOG: +redo done at ([0-9A-F]+\/[0-9A-F]+).*$/\1/p' "$dir/server.log" | tail -1)"
      timeline="$(pg_controldata -D "$PGDATA" 2>/dev/null | sed -n "s/^Latest checkpoint's TimeLineID: *//p")"
      [[ -n "$redo_done" && "$timeline" =~ ^[0-9]+$ ]] && fail_on_archive_gap "$(walfile_before "$timeline" "$redo_done")"
      drill_failed "$replay_failure"
    fi
    count_started=$SECONDS
    counted_at="$("${psql[@]}" -d postgres -c "SELECT pg_last_wal_replay_lsn()::text")"
    [[ "$counted_at" == "$PG_DRILL_COUNT_LSN" ]] ||
      drill_failed "the replay paused at $counted_at, not at $PG_DRILL_COUNT_LSN where the source was counted: $(grep -E 'LOG: +(recovery stopping|pausing)|WARNING:' "$dir/server.log" | tail -1 | sed -E 's/^.*(LOG|WARNING): +//')"
    counts_at="$(count_databases_with_query "${psql[@]}")" || drill_failed "counting the databases at $counted_at failed"
    log "drill: counted at $counted_at; replaying the rest of the archive"
    pg_ctl -D "$PGDATA" -m fast -w -t 600 stop >/dev/null 2>&1 || drill_failed "the private server did not stop after the count"
    drill_settings
    # The count and the restart are the drill's, not a restore's: left out of the measured time.
    count_seconds=$((SECONDS - count_started))
    start_private_server "$dir" off
    await_replay "$dir" promoted || die "drill failed: $replay_failure"
  else
    restore_and_replay drill_settings "$dir" || die "drill failed: $replay_failure"
  fi
  restore_seconds=$((SECONDS - started - count_seconds))
  local replayed archive_end restored_to
  # The segment holding the last replayed byte: a replay that ended on a WAL switch ends exactly on
  # a segment boundary, which pg_walfile_name gives as the segment before it on some majors and the
  # one after it on others (18 named the missing segment as replayed); one byte back is unambiguous.
  replayed="$("${psql[@]}" -d postgres -c "SELECT pg_walfile_name(pg_last_wal_replay_lsn() - 1)")"
  restored_to="$("${psql[@]}" -d postgres -c "SELECT coalesce(to_char(pg_last_xact_replay_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), '')")"
  fail_on_archive_gap "$replayed"
  local check
  if ! check="$(pg_amcheck -h "$dir" -p "$port" -U "$PG_DRILL_USER" --all --install-missing 2>&1)"; then
    drill_failed "pg_amcheck found damage: $(head -c 600 <<<"$check" | tr '\n' ' ')"
  fi
  # Not compared, the copy is counted at the end of the archive, the same way.
  local databases="$counts_at"
  [[ -n "$counted_at" ]] || databases="$(count_databases_with_query "${psql[@]}")" || drill_failed "counting the databases failed"
  pg_ctl -D "$PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
  printf '{"backup":"%s","restoredTo":"%s","replayedThrough":"%s","archiveEnd":"%s","restoreSeconds":%d,%s"databases":[%s]}' \
    "$restored_label" "$restored_to" "$replayed" "$archive_end" "$restore_seconds" "${counted_at:+\"countedAt\":\"$counted_at\",}" "$databases" >"${PG_TERMINATION_LOG:-/dev/termination-log}"
  log "drill: $restored_label restored to ${restored_to:-its end} in ${restore_seconds}s, every table and index sound"
}
if [[ "${1:-}" == "drill" ]]; then
  run_drill
  exit 0
fi

# Until `exec postgres` (which resets the trap), a pod deleted while this script waits (for its
# primary, for the network after a self-fence) ends the script at once.
stop_on_signal entrypoint

# Before anything touches the data: a fenced instance's volume stays exactly as it was fenced.
# Unfenced, the start goes on from here in the same container: ending it would put its restart
# behind the kubelet's back-off (10 s and more), and an unfenced primary is back within seconds.
if fenced_on_request; then
  log "fenced on request: PostgreSQL is not started and the data is left as it is until the instance is unfenced"
  while fenced_on_request; do nap 1; done
  log "unfenced: starting the instance"
fi

require PGDATA
require INSTANCE_NAME
require INSTANCE_ROLE
require PG_REPLICATION_SECRET_DIR
[[ "$INSTANCE_NAME" =~ ^[a-z0-9]([a-z0-9-]{0,48}[a-z0-9])?$ ]] ||
  die "INSTANCE_NAME '$INSTANCE_NAME' must be a DNS label of at most 50 characters"
case "$INSTANCE_ROLE" in
  primary | replica) ;;
  *) die "INSTANCE_ROLE must be 'primary' or 'replica', not '$INSTANCE_ROLE'" ;;
esac

port="${PGPORT:-5432}"
run_dir="${PG_RUN_DIR:-/var/run/postgresql}"
listen="${PG_LISTEN_ADDRESSES:-*}"
primary_wait_seconds="${PG_PRIMARY_WAIT_SECONDS:-60}"
no_sync=()
if [[ "${PG_NO_SYNC:-false}" == "true" ]]; then no_sync=(--no-sync); fi
repl_user="$(read_secret "$PG_REPLICATION_SECRET_DIR" username)"
repl_password="$(read_secret "$PG_REPLICATION_SECRET_DIR" password)"
slot_name="homeostat_${INSTANCE_NAME//-/_}"
passfile="$run_dir/replication.pgpass"
ready_marker="$PGDATA/homeostat.ready"
# Next to the data directory, on the same volume: a former primary's data set aside when it had to
# be re-cloned, and the marker of a pg_rewind under way (outside $PGDATA, which pg_rewind rewrites).
kept_dir="${PGDATA%/}.before-clone"
rewinding_marker="${PGDATA%/}.rewinding"
recovering_marker="${PGDATA%/}.recovering"

mkdir -p "$run_dir"
# A passfile keeps the replication password out of primary_conninfo, so neither SHOW nor
# pg_stat_wal_receiver nor the operator ever sees it. Rewritten at each start: rotation = restart.
umask 077
printf '*:*:*:%s:%s\n' "$(pgpass_field "$repl_user")" "$(pgpass_field "$repl_password")" >"$passfile"

# TLS (ADR 0214): the serving certificate the operator issued from the cluster's CA, mounted from
# <cluster>-server (tls.crt, tls.key, ca.crt). With it every connection this script or a standby
# opens to another instance is verify-full against that CA: encrypted, and to an instance holding a
# certificate of this cluster under the name dialled, never to whoever answers at that address.
tls_dir="${PG_TLS_DIR:-}"
if [[ -n "$tls_dir" ]]; then
  for file in tls.crt tls.key ca.crt; do
    [[ -s "$tls_dir/$file" ]] || die "TLS file $tls_dir/$file is missing or empty (Secret <cluster>-server)"
  done
fi
tls_conninfo() { # the libpq keywords that verify the server, when TLS is on
  [[ -n "$tls_dir" ]] && printf " sslmode=verify-full sslrootcert=%s" "$tls_dir/ca.crt"
  return 0
}
primary_conninfo() { # the conninfo a standby streams from; the engine later edits host and port
  printf "host=%s port=%s user=%s passfile=%s application_name=%s%s" \
    "$PRIMARY_HOST" "${PRIMARY_PORT:-5432}" "$repl_user" "$passfile" "$INSTANCE_NAME" "$(tls_conninfo)"
}
source_conninfo() { printf "host=%s port=%s user=%s passfile=%s dbname=postgres connect_timeout=5%s" \
  "$PRIMARY_HOST" "${PRIMARY_PORT:-5432}" "$repl_user" "$passfile" "$(tls_conninfo)"; }

# An upgrade that brings TLS rolls the replicas before the primary (ADR 0214, amended): this pod
# may mount the certificate while its primary, in a pod made by the earlier operator, still serves
# plaintext. Asked with verify-full, such a primary answers that it has no TLS at all. Nothing here
# then falls back to plaintext: a network attacker can forge that answer too, and only the operator
# knows from the pods' specs whether the primary mounts the certificate, so it alone sets the
# sslmode of this standby's primary_conninfo (repointStandby). The entrypoint skips what needs the
# primary and starts the standby as it is.
primary_lacks_tls() {
  [[ -n "$tls_dir" ]] || return 1
  local output
  output="$(psql "$(source_conninfo)" -qAtX -c 'SELECT 1' 2>&1 >/dev/null)" && return 1
  [[ "$output" == *"server does not support SSL"* ]]
}

wait_for_primary() {
  local deadline=$((SECONDS + primary_wait_seconds))
  log "waiting for the primary $PRIMARY_HOST:${PRIMARY_PORT:-5432} (up to ${primary_wait_seconds}s)"
  until pg_isready -q -h "$PRIMARY_HOST" -p "${PRIMARY_PORT:-5432}" -t 2; do
    ((SECONDS < deadline)) || die "primary $PRIMARY_HOST:${PRIMARY_PORT:-5432} not reachable after ${primary_wait_seconds}s"
    nap 1
  done
}

ensure_slot_on_primary() { # idempotent: a re-clone or a rejoin reuses the slot if it is there
  psql "$(source_conninfo)" -v ON_ERROR_STOP=1 -qAt -c \
    "SELECT pg_create_physical_replication_slot($(sql_literal "$slot_name"), true)
     WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $(sql_literal "$slot_name"))" \
    >/dev/null || die "could not create replication slot $slot_name on the primary"
}


# A former primary that pg_rewind could not bring back is re-cloned, and its data may hold commits
# no other instance has (the asynchronous tail): it is moved aside (a rename, no copy) instead of
# deleted. Bounded: one copy at most (an older one is removed first), and only when the volume
# has room for a clone of about the same size next to it; otherwise it is deleted and the log
# says why. The log line `keep-aside:` is what the operator reports in an Event.
keep_old_data_aside() {
  # Whatever happens next, $PGDATA no longer holds the former primary: a clone interrupted later
  # must not replace the copy kept now.
  rm -f "$rewinding_marker"
  if [[ -e "$kept_dir" ]]; then
    log "keep-aside: removing the data kept aside by an earlier re-clone ($kept_dir)"
    rm -rf "$kept_dir"
  fi
  local used_kb free_kb
  used_kb="$(du -sk "$PGDATA" | cut -f1)"
  free_kb="$(df -Pk "$(dirname "$PGDATA")" | awk 'NR == 2 { print $4 }')"
  # The clone is about the size of this data (the same cluster, diverged by a tail), plus 10 %.
  if ((free_kb < used_kb + used_kb / 10)); then
    log "keep-aside: not kept: the volume has ${free_kb} KiB free, a clone next to the old data (${used_kb} KiB) needs more; the former primary's data is deleted"
    return 0
  fi
  if mv -T "$PGDATA" "$kept_dir"; then
    log "keep-aside: the former primary's data (${used_kb} KiB) is kept at $kept_dir; it may hold commits the new primary lacks; delete it to free the space"
  else
    log "keep-aside: not kept: could not move $PGDATA to $kept_dir; the former primary's data is deleted"
  fi
}

clone_from_primary() {
  log "clone: pg_basebackup from $PRIMARY_HOST:${PRIMARY_PORT:-5432} (slot $slot_name)"
  wipe_data_dir
  ensure_slot_on_primary
  PGPASSFILE="$passfile" pg_basebackup -d "$(source_conninfo)" \
    -D "$PGDATA" -X stream -S "$slot_name" -c fast "${no_sync[@]}" ||
    die "pg_basebackup from $PRIMARY_HOST:${PRIMARY_PORT:-5432} failed"
  rm -f "$PGDATA/backup_manifest"
}

rewind_from_primary() { # returns non-zero when pg_rewind cannot bring this data directory back
  log "rejoin: running pg_rewind against $PRIMARY_HOST:${PRIMARY_PORT:-5432}"
  ensure_slot_on_primary
  rm -f "$ready_marker" # an interrupted pg_rewind leaves an unusable directory: re-clone next time
  : >"$rewinding_marker" # and its data is kept aside then, as after a failed one
  # A freshly promoted primary still has the old timeline in pg_control until its first
  # checkpoint, and pg_rewind, reading that, would wrongly find "no rewind required".
  psql "$(source_conninfo)" -v ON_ERROR_STOP=1 -qAt -c CHECKPOINT >/dev/null ||
    log "warning: CHECKPOINT on the primary failed; pg_rewind may misjudge the timelines"
  pg_rewind --target-pgdata="$PGDATA" --source-server="$(source_conninfo)" "${no_sync[@]}"
}

# A standby that received WAL the promoted primary never had (the old primary's last records, or
# its shutdown checkpoint) cannot follow the new timeline ("requested timeline is not a child of
# this server's history"), and would crash-loop for good. When the primary's timeline is not the
# one of this standby's last checkpoint, pg_rewind puts it on the primary's history (it does
# nothing when the standby is merely behind on it); when it cannot, the standby is cloned again:
# a standby holds nothing the primary lacks that anyone was told was committed.
follow_primary_timeline() {
  local ours theirs
  ours="$(pg_controldata "$PGDATA" 2>/dev/null | sed -n "s/^Latest checkpoint's TimeLineID: *//p")"
  # The timeline the primary writes now (pg_control lags a fresh promotion until its checkpoint).
  theirs="$(psql "$(source_conninfo)" -qAtX -c \
    "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int" 2>/dev/null)" || return 0
  [[ -z "$ours" || -z "$theirs" || "$ours" == "$theirs" ]] && return 0
  log "rejoin: the primary writes timeline $theirs, this standby's last checkpoint is on $ours; running pg_rewind"
  rewind_or_clone
  rm -f "$rewinding_marker"
}

# pg_rewind onto the primary's history; when it cannot, this data is kept aside (bounded) and the
# instance cloned again.
rewind_or_clone() {
  if rewind_from_primary; then
    log "rejoin: method=pg_rewind"
  else
    log "rejoin: pg_rewind failed; falling back to a fresh clone"
    keep_old_data_aside
    clone_from_primary
    log "rejoin: method=clone"
  fi
}

# Rewrites the settings that make this data directory a standby of $PRIMARY_HOST. They live in
# postgresql.auto.conf (not on the command line) so that the engine can later re-point the standby
# with ALTER SYSTEM + reload, without a restart. A clone or a rewind copies the source's own
# standby settings, and a switchover leaves the demoted primary read-only, hence the cleanup first.
write_standby_settings() {
  local auto="$PGDATA/postgresql.auto.conf" kept
  touch "$auto"
  kept="$(grep -Ev '^[[:space:]]*(primary_conninfo|primary_slot_name|recovery_min_apply_delay|default_transaction_read_only)[[:space:]]*=' "$auto" || true)"
  {
    [[ -n "$kept" ]] && printf '%s\n' "$kept"
    printf "primary_conninfo = %s\n" "$(sql_literal "$(primary_conninfo)")"
    printf "primary_slot_name = %s\n" "$(sql_literal "$slot_name")"
  } >"$auto.tmp"
  mv "$auto.tmp" "$auto"
  touch "$PGDATA/standby.signal"
}

# The roles the cluster's Secrets name, as SQL for single-user mode (statements end with a blank
# line). `create`: a new cluster, the roles made. `ensure`: data from a backup (recovery), whose
# roles may exist with another cluster's passwords: each made when missing, its password and
# attributes set to this cluster's either way. The replication role gets the four functions
# pg_rewind needs on a source and a checkpoint (short of superuser).
roles_sql() {
  local mode="$1" su_user="$2" su_password="$3"
  role_sql() { # role_sql <name> <attributes> <password>
    if [[ "$mode" == "ensure" ]]; then
      # shellcheck disable=SC2016 # $homeostat$ quotes the DO block's body in SQL; nothing to expand
      printf 'DO $homeostat$ BEGIN IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = %s) THEN CREATE ROLE %s; END IF; END $homeostat$;\n\nALTER ROLE %s WITH %s PASSWORD %s;\n\n' \
        "$(sql_literal "$1")" "$(sql_identifier "$1")" "$(sql_identifier "$1")" "$2" "$(sql_literal "$3")"
    else
      printf 'CREATE ROLE %s WITH %s PASSWORD %s;\n\n' "$(sql_identifier "$1")" "$2" "$(sql_literal "$3")"
    fi
  }
  [[ "$mode" == "ensure" ]] && role_sql "$su_user" "SUPERUSER LOGIN" "$su_password"
  role_sql "$repl_user" "LOGIN REPLICATION" "$repl_password"
  local fn
  for fn in 'pg_ls_dir(text, boolean, boolean)' 'pg_stat_file(text, boolean)' 'pg_read_binary_file(text)' \
    'pg_read_binary_file(text, bigint, bigint, boolean)'; do
    printf 'GRANT EXECUTE ON FUNCTION pg_catalog.%s TO %s;\n\n' "$fn" "$(sql_identifier "$repl_user")"
  done
  printf 'GRANT pg_checkpoint TO %s;\n\n' "$(sql_identifier "$repl_user")"
  if [[ -n "${PG_APP_SECRET_DIR:-}" ]]; then
    role_sql "$(read_secret "$PG_APP_SECRET_DIR" username)" "LOGIN" "$(read_secret "$PG_APP_SECRET_DIR" password)"
  fi
}

# Single-user mode runs bootstrap SQL without opening any socket; exit_on_error turns any failed
# statement into a non-zero exit. The SQL holds passwords in clear (bash cannot compute a SCRAM
# verifier), so nothing may log a statement: the user's parameters are not included yet
# (write_server_config comes later), and the command line turns off every setting that logs a
# statement's text, a failing one's included, whatever postgresql.conf says. Prints the output.
single_user_sql() { # single_user_sql <sql> <what, for the error>
  local output
  if ! output="$(postgres --single -j -D "$PGDATA" -c exit_on_error=on -c log_statement=none \
    -c log_min_duration_statement=-1 -c log_min_duration_sample=-1 -c log_min_error_statement=panic \
    -c log_duration=off -c debug_print_parse=off -c debug_print_rewritten=off \
    -c debug_print_plan=off -c shared_preload_libraries= -c archive_mode=off postgres <<<"$1" 2>&1)"; then
    grep -E '(ERROR|FATAL|LOG):' <<<"$output" >&2 || true
    wipe_data_dir
    die "$2 failed: $(grep -m1 -E '(ERROR|FATAL):' <<<"$output" | sed -E 's/^.*(ERROR|FATAL): +//')"
  fi
  printf '%s' "$output"
}

initdb_primary() {
  require PG_SUPERUSER_SECRET_DIR
  local su_user su_password_file
  su_user="$(read_secret "$PG_SUPERUSER_SECRET_DIR" username)"
  su_password_file="$PG_SUPERUSER_SECRET_DIR/password"
  log "bootstrap: initdb as a new primary (superuser $su_user)"
  if [[ -d "$PGDATA" ]] && [[ -n "$(ls -A "$PGDATA")" ]]; then
    die "$PGDATA is not empty but holds no complete cluster; refusing to touch it"
  fi
  mkdir -p "$PGDATA" && chmod 700 "$PGDATA"
  # A bootstrap that fails leaves nothing behind: the next start bootstraps again and reports the
  # same cause, rather than "holds an incomplete cluster", which hides it.
  local output
  if ! output="$(initdb -D "$PGDATA" -U "$su_user" --pwfile="$su_password_file" --auth-local=scram-sha-256 \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C "${no_sync[@]}" 2>&1 >/dev/null)"; then
    printf '%s\n' "$output" >&2
    wipe_data_dir
    die "initdb failed: $(tail -n 3 <<<"$output" | paste -sd ' ' -)"
  fi
  local sql
  sql="$(roles_sql create "$su_user" "")"
  if [[ -n "${PG_APP_SECRET_DIR:-}" ]]; then
    sql+="

CREATE DATABASE $(sql_identifier "${PG_APP_DATABASE:-app}") OWNER $(sql_identifier "$(read_secret "$PG_APP_SECRET_DIR" username)");
"
  fi
  single_user_sql "$sql" "bootstrap SQL (roles, grants, database)" >/dev/null
  return 0
}

# spec.bootstrap.recovery (ADR 0217): the first primary's data comes from a backup of another (or
# an earlier) cluster and the WAL archived after it, instead of initdb. pgBackRest restores the
# backup the target needs from the source repository (repo2 in its own configuration file, its
# credentials in PGBACKREST_REPO2_*, never the cluster's own) and writes the recovery settings; a
# private server (no TCP, a socket of its own, so neither the probes nor the operator see it)
# replays to the target and promotes; its recovery settings are then removed, so that no later
# standby of this data stops at the target, and the roles get this cluster's passwords. A marker
# beside the data directory says a restore is under way: one interrupted at any step starts over.
recover_primary() {
  require PG_SUPERUSER_SECRET_DIR
  local what output again="bootstrap cannot change: delete this PostgreSQLCluster and create it again with another bootstrap.recovery"
  what="$(recovery_description)"
  log "recovery: restoring $what"
  touch "$recovering_marker"
  if ! restore_and_replay write_server_config "$run_dir/recovery"; then
    rm -f "$recovering_marker"
    die "$replay_failure. $again"
  fi
  pg_ctl -D "$PGDATA" -m fast -w -t 600 stop >/dev/null
  cat "$run_dir/recovery/server.log" >&2 || true
  local auto="$PGDATA/postgresql.auto.conf" kept
  kept="$(grep -Ev '^[[:space:]]*(restore_command|recovery_target[a-z_]*)[[:space:]]*=' "$auto" || true)"
  printf '%s\n' "$kept" >"$auto.tmp" && mv "$auto.tmp" "$auto"
  rm -f "$PGDATA/recovery.signal" "$PGDATA/standby.signal" "$ready_marker"
  single_user_sql "$(roles_sql ensure "$(read_secret "$PG_SUPERUSER_SECRET_DIR" username)" \
    "$(read_secret "$PG_SUPERUSER_SECRET_DIR" password)")" "setting this cluster's roles on the recovered data" >/dev/null
  if [[ -n "${PG_APP_SECRET_DIR:-}" ]]; then
    local db="${PG_APP_DATABASE:-app}"
    output="$(single_user_sql "SELECT 1 AS present FROM pg_catalog.pg_database WHERE datname = $(sql_literal "$db");" "looking up the database $db")"
    if ! grep -q 'present = "1"' <<<"$output"; then
      single_user_sql "CREATE DATABASE $(sql_identifier "$db") OWNER $(sql_identifier "$(read_secret "$PG_APP_SECRET_DIR" username)");" "creating the database $db" >/dev/null
    fi
  fi
  rm -f "$recovering_marker"
  log "recovery: $what done; the recovered data is this cluster's first primary"
}

slot_wal_bound_mb() { # a quarter of the data volume's size, at least 256 MB (wal_keep_size)
  local total_kb
  total_kb="$(df -Pk "$(dirname "$PGDATA")" | awk 'NR == 2 { print $2 }')"
  local mb=$((${total_kb:-0} / 4 / 1024))
  echo $((mb < 256 ? 256 : mb))
}

# WAL archiving (spec.backup, ADR 0213): on, with the operator's archive_command (pgBackRest
# archive-push) and archive_timeout, when the operator passes them; off otherwise. A segment the
# command cannot push stays in pg_wal and is retried; the operator reports the failure from
# pg_stat_archiver.
archive_settings() {
  if [[ -z "${PG_ARCHIVE_COMMAND:-}" ]]; then
    echo "archive_mode = off"
    return 0
  fi
  [[ "${PG_ARCHIVE_TIMEOUT:-300}" =~ ^[0-9]{1,6}$ ]] || die "PG_ARCHIVE_TIMEOUT must be a number of seconds"
  echo "archive_mode = on"
  echo "archive_command = $(sql_literal "$PG_ARCHIVE_COMMAND")"
  echo "archive_timeout = ${PG_ARCHIVE_TIMEOUT:-300}"
}

# archive_command fails until the cluster's stanza exists in the repository. It is created here
# (idempotent: pgBackRest checks an existing one against this data directory), from the data
# directory's pg_control (--no-online: the server need not be up, and a replica's is the same
# cluster's), on every instance so that a replica promoted later has done it too. Until it
# succeeds WAL waits in pg_wal, and the operator reports the failing segment. It runs beside the
# server, never as its child (the postmaster takes an unknown child's error exit for a crash), and
# ends with the server.
create_stanza_in_background() {
  [[ -n "${PG_BACKREST_STANZA:-}" ]] || return 0
  local server="$$"
  (stanza_loop "$server" </dev/null >/dev/null &)
}
stanza_loop() {
  local server="$1" delay=1 output i
  while kill -0 "$server" 2>/dev/null; do
    if output="$(pgbackrest --config="$PG_BACKREST_CONFIG_FILE" --stanza="$PG_BACKREST_STANZA" \
      --log-level-console=error --log-level-stderr=off --no-online stanza-create 2>&1)"; then
      log "backup: stanza $PG_BACKREST_STANZA is in the repository; WAL archiving can proceed"
      return 0
    fi
    log "backup: stanza-create failed: $(backup_failure_reason "$output"); WAL waits in pg_wal until it succeeds; retrying in ${delay}s"
    for ((i = 0; i < delay; i++)); do
      kill -0 "$server" 2>/dev/null || return 0
      nap 1
    done
    delay=$((delay * 2 > 60 ? 60 : delay * 2))
  done
}

# pgBackRest's TLS server (ADR 0215), when the operator configured one: how a backup pod reads
# this instance's files and asks its server to start and stop a backup (as the superuser through
# the socket, the password in a passfile only this user reads). It runs beside the server, never
# as its child (as the stanza loop above), is started again if it stops, and ends with the server.
serve_backups_in_background() {
  grep -q '^tls-server-port=' <<<"${PG_BACKREST_CONFIG:-}" || return 0
  [[ -n "$tls_dir" ]] || die "PG_BACKREST_CONFIG names a TLS server but PG_TLS_DIR is not set"
  require PG_SUPERUSER_SECRET_DIR
  local server="$$" su_passfile="$run_dir/superuser.pgpass"
  printf '*:*:*:%s:%s\n' "$(pgpass_field "$(read_secret "$PG_SUPERUSER_SECRET_DIR" username)")" \
    "$(pgpass_field "$(read_secret "$PG_SUPERUSER_SECRET_DIR" password)")" >"$su_passfile"
  chmod 600 "$su_passfile"
  (backup_server_loop "$server" "$su_passfile" </dev/null >/dev/null &)
}
backup_server_loop() {
  local server="$1" su_passfile="$2" pid delay=1
  while kill -0 "$server" 2>/dev/null; do
    PGPASSFILE="$su_passfile" pgbackrest --config="$PG_BACKREST_CONFIG_FILE" --log-level-console=error \
      --log-level-stderr=off server >/dev/null 2>&1 &
    pid=$!
    while kill -0 "$server" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do nap 1; done
    if ! kill -0 "$server" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      return 0
    fi
    wait "$pid" 2>/dev/null || true
    log "backup: pgBackRest's TLS server stopped; starting it again in ${delay}s"
    nap "$delay"
    delay=$((delay * 2 > 30 ? 30 : delay * 2))
  done
  return 0
}

# TLS 1.3 at least: every client that can verify this cluster's certificate (libpq 12 and later,
# Node.js, the JDBC driver on Java 11+) speaks it, and 1.2's weaker suites then need no pruning.
tls_settings() {
  if [[ -z "$tls_dir" ]]; then
    echo "ssl = off"
    return 0
  fi
  echo "ssl = on"
  echo "ssl_cert_file = $(sql_literal "$tls_dir/tls.crt")"
  echo "ssl_key_file = $(sql_literal "$tls_dir/tls.key")"
  echo "ssl_min_protocol_version = 'TLSv1.3'"
}

# A renewed serving certificate (ADR 0214, amended 2026-11-27): the operator issues it again in
# place, in the Secret, and the kubelet swaps the mounted files some time later (its sync period,
# a minute or so). PostgreSQL reads them only at its start and on a reload, so a loop beside the
# server compares their checksum every PG_TLS_CHECK_SECONDS and has the server reload when it
# changed: new connections get the new certificate, sessions go on, nothing restarts. A reload
# that cannot load the files (a key not matching its certificate, half-swapped) leaves PostgreSQL
# serving the ones it had, and the loop tries again at the next change. The check starts before
# the server reads the files, so a swap in between is reloaded too. Like stanza_loop, never the
# server's child.
reload_tls_in_background() {
  [[ -n "$tls_dir" ]] || return 0
  [[ "${PG_TLS_CHECK_SECONDS:-10}" =~ ^[1-9][0-9]{0,3}$ ]] || die "PG_TLS_CHECK_SECONDS must be a number of seconds"
  local server="$$" seen
  seen="$(tls_checksum)"
  (tls_reload_loop "$server" "$seen" </dev/null >/dev/null &)
}
tls_checksum() { cat "$tls_dir/tls.crt" "$tls_dir/tls.key" "$tls_dir/ca.crt" 2>/dev/null | cksum; }
tls_reload_loop() {
  local server="$1" seen="$2" now
  while kill -0 "$server" 2>/dev/null; do
    nap "${PG_TLS_CHECK_SECONDS:-10}"
    now="$(tls_checksum)"
    [[ "$now" != "$seen" ]] || continue
    # pg_ctl signals the postmaster named in postmaster.pid: only once it is up and handles SIGHUP.
    if pg_ctl reload -D "$PGDATA" -s >/dev/null 2>&1; then
      log "tls: the certificate files changed; the server reloads them (no restart)"
      seen="$now"
    fi
  done
}

# Client authentication: a password (SCRAM) always; over TCP, with TLS on, only over TLS
# (hostssl: a plaintext connection matches no line and is refused), replication included. The
# local socket stays as it was: it never leaves the pod.
write_hba() {
  local tcp=host
  [[ -n "$tls_dir" ]] && tcp=hostssl
  cat >"$PGDATA/pg_hba.conf" <<EOF
# Written by the homeostat entrypoint at every start; edits here are lost.
local all all scram-sha-256
$tcp replication $(sql_identifier "$repl_user") all scram-sha-256
$tcp all all all scram-sha-256
EOF
}

write_server_config() {
  local conf="$PGDATA/homeostat.conf"
  # Three parts, and the order matters: PostgreSQL takes the last value of a setting. First the
  # operator's defaults a user may change; then the user's parameters (PG_PARAMETERS); then the
  # settings replication, failover and fencing rest on, last so no line above overrides them (the
  # API server refuses them in the parameters too; src/api/operator-owned-parameters.ts says why).
  {
    echo "# Written by the homeostat entrypoint at every start; edits here are lost."
    echo "# Defaults: the parameters may change these."
    # A standby whose primary restarted (or changed) retries after this, not PostgreSQL's 5 s: in
    # synchronous mode `required` the primary's commits wait for it.
    echo "wal_retrieve_retry_interval = 500ms"
    # A former primary rewound by pg_rewind replays from the last common checkpoint with the new
    # primary's WAL (pg_rewind replaces its own); the new primary, a standby until then, must
    # still have it. Without this, an asynchronous failover's rejoin asked for a segment the new
    # primary had recycled and never caught up (found by bench:failover --cluster). Less only
    # makes a rejoin fall back to a clone more often.
    echo "wal_keep_size = 256MB"
    # A replica that is down or far behind keeps WAL on the primary through its slot; unbounded
    # (PostgreSQL's -1) it fills the primary's volume and stops the primary. A quarter of the
    # volume: past it the slot is invalidated and that replica must be re-cloned, the primary
    # stays up. The parameters may set another bound, never none (the API server refuses -1).
    echo "max_slot_wal_keep_size = $(slot_wal_bound_mb)MB"
    if [[ -n "${PG_PARAMETERS:-}" ]]; then
      echo "# PG_PARAMETERS"
      printf '%s\n' "$PG_PARAMETERS"
    fi
    echo "# Owned by the operator."
    echo "listen_addresses = $(sql_literal "$listen")"
    echo "port = $port"
    echo "unix_socket_directories = $(sql_literal "$run_dir")"
    echo "cluster_name = $(sql_literal "$INSTANCE_NAME")"
    echo "wal_level = replica"
    echo "wal_log_hints = on"    # pg_rewind needs it (or data checksums)
    echo "full_page_writes = on" # pg_rewind needs it too
    echo "hot_standby = on"
    # Replica queries do not hold up replay (a conflict waits up to max_standby_streaming_delay):
    # a failover promotes a replica only once it has replayed what it received.
    echo "hot_standby_feedback = on"
    echo "recovery_min_apply_delay = 0"
    echo "max_wal_senders = 16"
    echo "max_replication_slots = 16"
    echo "wal_receiver_status_interval = 1s"
    # A primary cut off the network sends nothing, not even a FIN: its standbys notice only when
    # this expires, and a failover waits for them to let go of it. 3 s (CloudNativePG sets 5 s):
    # with the status sent every second, a standby still hears from a busy primary well within it,
    # and it keeps a network cut's failover within its 5 s budget. The engine counts a receiver
    # silent for 5 s as cut off, which holds only while this is shorter.
    echo "wal_receiver_timeout = 3s"
    echo "wal_sender_timeout = 3s"
    echo "password_encryption = scram-sha-256"
    echo "logging_collector = off"
    archive_settings
    tls_settings
  } >"$conf"
  grep -q "^include_if_exists = 'homeostat.conf'" "$PGDATA/postgresql.conf" ||
    echo "include_if_exists = 'homeostat.conf'" >>"$PGDATA/postgresql.conf"
  write_hba
}

has_cluster() { [[ -s "$PGDATA/PG_VERSION" ]]; }
# The marker holds this instance's name: a clone or rewind copies the source's marker, which names
# the source, so a copy interrupted half-way is never mistaken for a complete one.
is_complete() { [[ "$(cat "$ready_marker" 2>/dev/null)" == "$INSTANCE_NAME" ]]; }
mark_complete() { echo "$INSTANCE_NAME" >"$ready_marker"; }

if [[ "$INSTANCE_ROLE" == "primary" ]]; then
  if [[ -e "$recovering_marker" ]]; then
    log "recovery: an earlier restore was interrupted; starting it again"
    wipe_data_dir
  fi
  if ! has_cluster; then
    # The operator refuses initdb once the cluster has had a primary (PG_INITDB=refused): an empty
    # volume then means this instance's data was lost, and a new empty primary would be followed
    # by the replicas that still hold the data, and found empty by the application.
    [[ "${PG_INITDB:-allowed}" == "allowed" ]] ||
      die "$PGDATA is empty but this cluster was bootstrapped before: refusing to make a new, empty primary (the data is on the replicas, or in a backup); the operator promotes a replica instead"
    if [[ -n "${PG_RECOVERY_CONFIG:-}" ]]; then recover_primary; else initdb_primary; fi
    mark_complete
  elif ! is_complete; then
    die "$PGDATA holds an incomplete cluster (interrupted clone or rewind); start this instance as a replica to re-clone it"
  elif [[ -e "$PGDATA/standby.signal" ]]; then
    log "warning: role is primary but the data directory is a standby; starting it as a standby (only the failover engine promotes)"
  else
    log "start: existing primary data directory"
  fi
elif has_cluster && is_complete && [[ -e "$PGDATA/standby.signal" ]]; then
  # A standby with intact data starts without waiting for the primary: it streams once one answers
  # (primary_conninfo names the read-write Service), and until then it answers the operator, which
  # may need to promote it when the primary and its volume are gone.
  require PRIMARY_HOST
  log "start: existing standby data directory"
  if ! pg_isready -q -h "$PRIMARY_HOST" -p "${PRIMARY_PORT:-5432}" -t 2; then
    log "start: the primary does not answer yet; starting as a standby without it"
  elif primary_lacks_tls; then
    log "start: the primary serves no TLS yet (its pod predates the certificate); starting as a standby without it: the operator sets how it streams from that primary"
  else
    ensure_slot_on_primary
    follow_primary_timeline
  fi
  write_standby_settings
  mark_complete
elif [[ "${PG_RETAINED:-false}" == "true" ]] && has_cluster && is_complete && [[ -n "${PRIMARY_HOST:-}" ]] &&
  ! pg_isready -q -h "$PRIMARY_HOST" -p "${PRIMARY_PORT:-5432}" -t 2; then
  # A cluster created again on claims an earlier one left (storage.retention: Retain): that one's
  # primary is not known, and this may be its data. It starts as a standby as it is, taking no
  # write, without a rewind (nothing to rewind onto) or a clone (this may be the furthest data);
  # the operator promotes the instance whose data goes furthest, and restarts the others, which
  # then take the rejoin path above (ADR 0211).
  log "start: data kept from an earlier cluster of this name, last a primary; starting it as a standby until the operator chooses the primary"
  write_standby_settings
  mark_complete
else
  require PRIMARY_HOST
  wait_for_primary
  # A clone or a rewind cannot start without the primary; it starts once the primary has rolled.
  ! primary_lacks_tls ||
    die "the primary $PRIMARY_HOST serves no TLS yet (its pod predates the certificate); this instance is cloned or rejoined once the primary has rolled onto TLS"
  if ! has_cluster || ! is_complete; then
    if [[ -e "$rewinding_marker" ]] && has_cluster; then
      log "rejoin: an earlier pg_rewind was interrupted; re-cloning"
      keep_old_data_aside
    fi
    clone_from_primary
  elif [[ ! -e "$PGDATA/standby.signal" ]]; then
    rewind_or_clone
  fi
  rm -f "$rewinding_marker"
  write_standby_settings
  mark_complete
fi

write_server_config
write_backup_config
if [[ "$INSTANCE_ROLE" == "primary" && -e "$run_dir/self-fenced" ]]; then
  log "self-fenced: cut off from the cluster; waiting until the network is back before starting as a primary"
  while [[ -e "$run_dir/self-fenced" ]]; do nap 1; done
fi
# A parameter PostgreSQL cannot take (a misspelt name, a bad value) stops the server before it
# says why anywhere but its log; checked here, PostgreSQL's own message is the termination message.
if ! output="$(postgres -D "$PGDATA" -C data_directory 2>&1 >/dev/null)"; then
  [[ -n "$output" ]] && printf '%s\n' "$output" >&2
  die "the configuration is not valid: $(grep -oE '(LOG|ERROR|FATAL): .*' <<<"$output" | head -3 |
    sed -E 's/^[A-Z]+: +//' | awk 'NR > 1 { printf "; " } { printf "%s", $0 }')"
fi
create_stanza_in_background
serve_backups_in_background
reload_tls_in_background
log "exec postgres (role $INSTANCE_ROLE, port $port)"
exec postgres -D "$PGDATA"
