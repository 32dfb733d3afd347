// postgresql.conf parameters the operator sets itself. A user value for one of them would break
// replication, failover or the pods' networking, so the API server refuses it (see the CEL rule on
// spec.postgresql.parameters) with a message naming the offending parameters.

/** Each operator-owned parameter, with why the operator owns it (the guide lists these). */
export const operatorOwnedParameters: Readonly<Record<string, string>> = {
  listen_addresses: 'the pod listens on every address; Services choose who reaches it',
  port: 'Services and replicas connect to 5432',
  unix_socket_directories: 'the entrypoint places sockets in its run directory',
  data_directory: 'the data directory is the PVC',
  config_file: 'the entrypoint writes the configuration',
  hba_file: 'the entrypoint writes pg_hba.conf (scram-sha-256 everywhere)',
  ident_file: 'the entrypoint writes the configuration',
  external_pid_file: 'the entrypoint writes the configuration',
  cluster_name: 'set to the instance name',
  wal_level: 'streaming replication needs replica',
  wal_log_hints: 'pg_rewind needs it on',
  full_page_writes: 'pg_rewind needs it on',
  hot_standby: 'replicas serve reads (the -ro Service)',
  hot_standby_feedback:
    'replica queries must not hold up replay: a failover promotes a replica once it has replayed what it received',
  recovery_min_apply_delay: 'a replica that delays replay is never eligible for promotion',
  wal_receiver_timeout:
    'a standby lets go of a silent primary within 3 s; a failover counts on it (a receiver silent for 5 s is cut off)',
  wal_sender_timeout:
    'a primary drops a silent standby within 3 s, so synchronous commits and the failover see it gone',
  wal_receiver_status_interval: 'standbys report every second, well within wal_sender_timeout',
  max_wal_senders: 'sized for the instances',
  max_replication_slots: 'one slot per instance',
  primary_conninfo: 'set by the operator to the current primary',
  primary_slot_name: 'set by the operator to the instance slot',
  restore_command:
    'the operator sets it from spec.backup when it recovers from the archive; replicas stream from the primary',
  archive_mode: 'the operator sets it from spec.backup (on while a destination is set)',
  archive_command: 'the operator sets it from spec.backup.destination (pgBackRest archive-push)',
  archive_library: 'the operator archives WAL through archive_command, set from spec.backup',
  archive_timeout: 'the operator sets it from spec.backup.archiveTimeout',
  recovery_target: 'recovery targets would stop a replica short of the primary',
  recovery_target_name: 'recovery targets would stop a replica short of the primary',
  recovery_target_time: 'recovery targets would stop a replica short of the primary',
  recovery_target_xid: 'recovery targets would stop a replica short of the primary',
  recovery_target_lsn: 'recovery targets would stop a replica short of the primary',
  recovery_target_inclusive: 'recovery targets would stop a replica short of the primary',
  recovery_target_timeline: 'replicas follow the latest timeline after a failover',
  recovery_target_action: 'recovery targets would stop a replica short of the primary',
  synchronous_standby_names: 'set from spec.postgresql.synchronous',
  default_transaction_read_only: 'used to quiesce the primary during a switchover',
  password_encryption: 'pg_hba.conf requires scram-sha-256 passwords',
  ssl: 'on, with the serving certificate the operator issues from the cluster CA (ADR 0214)',
  ssl_cert_file: 'the serving certificate the operator issues (ADR 0214)',
  ssl_key_file: 'the serving certificate the operator issues (ADR 0214)',
  ssl_ca_file: 'clients are verified by password, not certificate (ADR 0214)',
  ssl_min_protocol_version: 'TLS 1.3: a lower bound would let a connection use an older protocol (ADR 0214)',
  logging_collector: 'logs go to the container output',
};

/**
 * Parameters a user may set only within a bound, each with its CEL rule (over the parameters
 * map, `self`) and the message: the guarantee a value outside the bound would break.
 */
export const boundedParameters: readonly { name: string; rule: string; message: string }[] = [
  {
    name: 'superuser_reserved_connections',
    rule: "!('superuser_reserved_connections' in self) || (self['superuser_reserved_connections'].matches('^[0-9]{1,4}$') && int(self['superuser_reserved_connections']) >= 3)",
    message:
      'postgresql.parameters.superuser_reserved_connections must be a whole number of at least 3: the operator observes and fails over through these connections when clients take all others',
  },
  ...['max_standby_streaming_delay', 'max_standby_archive_delay'].map((name) => ({
    name,
    rule: `!('${name}' in self) || !self['${name}'].startsWith('-')`,
    message: `postgresql.parameters.${name} may not be negative: a replica query would hold up replay for ever, and a replica behind cannot be promoted`,
  })),
  {
    name: 'max_slot_wal_keep_size',
    rule: "!('max_slot_wal_keep_size' in self) || !self['max_slot_wal_keep_size'].startsWith('-')",
    message:
      'postgresql.parameters.max_slot_wal_keep_size may not be negative: a replica that is down or behind would keep WAL on the primary without bound until its volume is full and it stops',
  },
];

/** The names, sorted: what the CRD's CEL rule and its message list. */
export const operatorOwnedParameterNames: readonly string[] = Object.keys(operatorOwnedParameters).sort();
