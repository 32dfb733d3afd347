// memcached's command line and the files it reads, in one place: the pod runs exactly these
// arguments, and the integration tests start a real memcached with them (ADR 0403).
import { exporterPort, loopbackStatsPort } from '../api/memcached-schema.ts';
import type { MemcachedSpecFields } from '../api/memcached-types.ts';

/**
 * Where the pod's containers find the TLS Secret, the SASL database and the SASL credentials, and
 * the loopback port the sidecar reads statistics from under TLS.
 */
export interface PodLayout {
  /** The kubernetes.io/tls Secret (tls.crt, tls.key, maybe ca.crt), read-only. */
  readonly tlsDir: string;
  /**
   * The sasldb, the Cyrus SASL config (memcached.conf) and the copies of the Secret's username and
   * password the init container writes; the sidecar logs in with those copies.
   */
  readonly saslDir: string;
  /** The SASL Secret (username, password), read-only: only the init container reads it. */
  readonly saslCredentialsDir: string;
  /** The plaintext listener memcached opens on 127.0.0.1 for the sidecar when TLS is on. */
  readonly statsPort: number;
}

/** The layout inside the pod. */
export const podLayout: PodLayout = {
  tlsDir: '/etc/memcached/tls',
  saslDir: '/etc/memcached/sasl',
  saslCredentialsDir: '/etc/memcached/sasl-credentials',
  statsPort: loopbackStatsPort,
};

/** What the pod builder knows of the Secrets a spec names (read by the reconciler). */
export interface SecretFacts {
  /** The TLS Secret holds ca.crt. */
  readonly tlsHasCa?: boolean;
}

/** The spec fields memcached's command line depends on. */
export type CommandSpec = Pick<MemcachedSpecFields, 'port' | 'memoryLimitMB' | 'tls' | 'sasl'> & {
  readonly exporter: { readonly enabled: boolean };
};

/**
 * Whether the metrics sidecar runs: asked for, and on none of the ports it would share (the API
 * server refuses those specs; one stored before its rule existed gets no sidecar rather than two
 * listeners on one port and a Service with a duplicate port).
 */
export function sidecarRuns(spec: CommandSpec): boolean {
  const clash = spec.port === exporterPort || (spec.tls !== undefined && spec.port === loopbackStatsPort);
  return spec.exporter.enabled && !clash;
}

/** Whether memcached opens the loopback plaintext listener the sidecar reads statistics from. */
export function hasLoopbackStatsListener(spec: CommandSpec): boolean {
  return spec.tls !== undefined && sidecarRuns(spec);
}

/** The address (host:port) the metrics sidecar reads memcached's statistics from. */
export function statsAddress(spec: CommandSpec, layout: PodLayout): string {
  return `127.0.0.1:${hasLoopbackStatsListener(spec) ? layout.statsPort : spec.port}`;
}

/**
 * The sidecar's SASL arguments: the init container's copies of the Secret's files, which the
 * database memcached runs with was built from (it reads them at each connection); none without
 * SASL. Not the mounted Secret: the kubelet rewrites it on rotation while memcached keeps its
 * database until the pod rolls, and a sidecar reading it would be refused until then.
 */
export function exporterSaslArgs(spec: CommandSpec, layout: PodLayout): string[] {
  const credentials = layout.saslDir;
  return spec.sasl
    ? [
        `--memcached.sasl-username-file=${credentials}/username`,
        `--memcached.sasl-password-file=${credentials}/password`,
      ]
    : [];
}

/** memcached's arguments (after the `memcached` command) for `spec`, laid out as `layout` says. */
export function memcachedArgs(spec: CommandSpec, facts: SecretFacts, layout: PodLayout): string[] {
  // -U 0 turns UDP off: memcached over UDP is a known traffic amplifier.
  const args = ['-p', String(spec.port), '-U', '0', '-m', String(spec.memoryLimitMB)];
  if (spec.tls) {
    const files = [`ssl_chain_cert=${layout.tlsDir}/tls.crt`, `ssl_key=${layout.tlsDir}/tls.key`];
    if (facts.tlsHasCa) files.push(`ssl_ca_cert=${layout.tlsDir}/ca.crt`);
    args.push('-Z', '-o', files.join(','));
  }
  if (hasLoopbackStatsListener(spec)) {
    // Every -l replaces memcached's default "all addresses", so it is asked for again with "*"
    // (what memcached does without -l: every address of the families the node has). Naming
    // 0.0.0.0 and [::] instead makes memcached exit on a node booted without IPv6. The notls
    // listener binds loopback only: nothing outside the pod can reach it.
    args.push('-l', `*,notls:127.0.0.1:${layout.statsPort}`);
  }
  // -S: every connection must authenticate (SASL, binary protocol only); SASL_CONF_PATH names the
  // config the init container wrote.
  if (spec.sasl) args.push('-S');
  return args;
}

/** The environment memcached needs: the Cyrus SASL config directory when SASL is on. */
export function memcachedEnv(spec: CommandSpec, layout: PodLayout): Record<string, string> {
  return spec.sasl ? { SASL_CONF_PATH: layout.saslDir } : {};
}
