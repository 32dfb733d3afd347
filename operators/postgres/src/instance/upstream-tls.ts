// How a standby's primary_conninfo speaks to its upstream, from what the operator knows of that
// upstream's pod (ADR 0214, amended 2026-11-27). An upgrade that brings TLS rolls the replicas
// before the primary, so for a while a standby that verifies certificates follows a primary that
// serves plaintext; the operator knows which pods mount the serving certificate, the standby does
// not. Never `prefer` or `allow`: both let whoever sits between the two instances answer "no TLS"
// and read the stream, so a standby speaks plaintext only to an upstream whose pod has no
// certificate to serve, and the moment that upstream mounts one, only TLS.

/** Whether the upstream serves TLS, as its pod's spec says (it mounts the serving certificate). */
export type UpstreamTransport = 'tls' | 'plaintext';

/**
 * The conninfo `current` with the TLS keywords `upstream` calls for: verify-full against the CA
 * file the entrypoint named (sslrootcert) toward a TLS upstream; `require` when the standby's pod
 * has no CA file (a pod made before TLS: encrypted, unverified, never plaintext); `disable` toward
 * a plaintext upstream, which fails closed if it starts serving TLS only (hostssl) before the
 * operator has set this again.
 */
export function withUpstreamTls(
  current: ReadonlyMap<string, string>,
  upstream: UpstreamTransport,
): Map<string, string> {
  const next = new Map(current);
  if (upstream === 'plaintext') {
    // sslrootcert stays: it is where the CA is once the upstream serves TLS.
    next.set('sslmode', 'disable');
  } else {
    next.set('sslmode', current.get('sslrootcert') ? 'verify-full' : 'require');
  }
  return next;
}
