// The Secrets a Memcached names (spec.tls, spec.sasl), checked before its pods are changed: a
// missing Secret or key would leave new pods unable to start while old ones are replaced, so the
// Deployment is left as it is and the problem is reported instead (ADR 0403). Only key names and
// Secret names are ever reported, never a value.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import type { Memcached } from '../api/memcached-types.ts';
import type { SecretFacts } from './memcached-command.ts';

/** What the pod builder may know of the named Secrets. */
export interface ReferencedSecrets extends SecretFacts {
  /**
   * The named Secrets' uids and resourceVersions, in a pod annotation: a rotated certificate or
   * password changes it and so rolls the pods (memcached reads both only at start). Versions, not
   * a hash of the content: a hash of a short password could be guessed back from the annotation.
   */
  readonly revision?: string;
}

/** Why the named Secrets cannot be used yet: a condition reason and a sentence for users. */
export interface SecretProblem {
  readonly reason: 'SecretMissing' | 'SecretInvalid';
  readonly message: string;
}

export type SecretCheck =
  | { readonly ok: true; readonly secrets: ReferencedSecrets }
  | { readonly ok: false; readonly problem: SecretProblem };

interface Reference {
  readonly field: 'tls' | 'sasl';
  readonly name: string;
  readonly keys: readonly string[];
}

function references(memcached: Memcached): Reference[] {
  const { tls, sasl } = memcached.spec;
  return [
    ...(tls ? [{ field: 'tls' as const, name: tls.secretName, keys: ['tls.crt', 'tls.key'] }] : []),
    ...(sasl ? [{ field: 'sasl' as const, name: sasl.secretName, keys: ['username', 'password'] }] : []),
  ];
}

const hasValue = (secret: V1Secret, key: string) => (secret.data?.[key] ?? '') !== '';

/**
 * The longest password saslpasswd2 -p stores whole (Cyrus SASL 2.1.28, bookworm's and forky's): it
 * keeps the first 2048 bytes of a longer one and says nothing, so clients sending all of it, the
 * metrics sidecar included, would be refused by every new pod.
 */
export const maxSaslPasswordBytes = 2048;

/**
 * The SASL value under `key` as the init script reads it: the username through the shell's
 * $(cat), which drops every trailing newline, the password through saslpasswd2 -p, which drops one
 * (and refuses an empty password, failing the pods). Decoded here only to be measured; the value
 * goes nowhere.
 */
function saslValueAsRead(secret: V1Secret, key: string): Buffer {
  const value = Buffer.from(secret.data?.[key] ?? '', 'base64');
  const newline = 0x0a;
  let end = value.length;
  if (key === 'username') {
    while (end > 0 && value[end - 1] === newline) end--;
  } else if (end > 0 && value[end - 1] === newline) {
    end--;
  }
  return value.subarray(0, end);
}

const hasSaslValue = (secret: V1Secret, key: string) => saslValueAsRead(secret, key).length > 0;

/** Whitespace as C's isspace sees it, which Cyrus SASL trims from a user name at login. */
const cWhitespace = new Set([0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]);

/**
 * Why SASL values that are present still could not be used, as a clause that names no value (not
 * even the password's length: that says something about it too); undefined when they can.
 */
function unusableSaslValue(secret: V1Secret): string | undefined {
  const username = saslValueAsRead(secret, 'username');
  const password = saslValueAsRead(secret, 'password');
  // PLAIN sends "\0user\0password": a NUL in either cannot be sent, and saslpasswd2 stores a
  // password only up to its first NUL (random bytes from /dev/urandom are the usual way in).
  for (const [key, value] of [
    ['username', username],
    ['password', password],
  ] as const) {
    if (value.includes(0)) {
      return `its ${key} holds a NUL byte, which SASL PLAIN cannot send (use printable characters)`;
    }
  }
  // saslpasswd2 stores the name as given, but memcached's Cyrus SASL trims it when a client logs
  // in: the lookup would never find it, for any client or the sidecar.
  if (cWhitespace.has(username[0] ?? 0) || cWhitespace.has(username[username.length - 1] ?? 0)) {
    return 'its username starts or ends with whitespace, which SASL drops when a client logs in, so nobody could authenticate';
  }
  if (password.length > maxSaslPasswordBytes) {
    return `its password is longer than ${maxSaslPasswordBytes} bytes, more than memcached's SASL database keeps (saslpasswd2 would cut it short, and clients sending all of it would be refused)`;
  }
  return undefined;
}

/** Whether `pem` holds a PEM certificate memcached can load (it reads PEM only). */
function isPemCertificate(pem: string): boolean {
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) return false;
  try {
    return new X509Certificate(pem).subject !== undefined;
  } catch {
    return false;
  }
}

/**
 * Why memcached would not start with the TLS Secret's files, as a clause that names no value:
 * it exits (status 64) on a tls.crt that is no PEM certificate, a tls.key that is no key or not
 * the certificate's, and a ca.crt with no certificate, and then the new pods crash while the
 * rollout takes old ones down. Undefined when it can load them. Errors are not passed on: a
 * parser's message could quote the key.
 */
function unusableTlsFiles(secret: V1Secret): string | undefined {
  const pem = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  const certificate = pem('tls.crt');
  if (!isPemCertificate(certificate)) return 'its tls.crt holds no PEM certificate';
  let matches: boolean;
  try {
    matches = new X509Certificate(certificate).checkPrivateKey(createPrivateKey(pem('tls.key')));
  } catch {
    return 'its tls.key holds no PEM private key';
  }
  if (!matches) return 'its tls.key is not the key of the certificate in tls.crt';
  if (hasValue(secret, 'ca.crt') && !isPemCertificate(pem('ca.crt'))) {
    return 'its ca.crt holds no PEM certificate';
  }
  return undefined;
}

/** Reads the Secrets `memcached` names from the API server and says whether its pods can use them. */
export async function checkReferencedSecrets(
  memcached: Memcached,
  client: Pick<KubeClient, 'find'>,
): Promise<SecretCheck> {
  const namespace = memcached.metadata?.namespace ?? 'default';
  const versions: string[] = [];
  let tlsHasCa = false;
  for (const ref of references(memcached)) {
    const named = `Secret ${ref.name} (spec.${ref.field}.secretName)`;
    // Read, not watched: caching every Secret of the namespaces would hold all their values.
    const secret = await client.find(builtin.secrets, ref.name, namespace);
    if (!secret) {
      return {
        ok: false,
        problem: {
          reason: 'SecretMissing',
          message: `${named} does not exist in namespace ${namespace}; the pods are left as they are until it does`,
        },
      };
    }
    const present = ref.field === 'sasl' ? hasSaslValue : hasValue;
    const missing = ref.keys.filter((key) => !present(secret, key));
    if (missing.length) {
      return {
        ok: false,
        problem: {
          reason: 'SecretInvalid',
          message: `${named} has no ${missing.join(' and no ')} (or an empty one); it needs ${ref.keys.join(' and ')}. The pods are left as they are until it does`,
        },
      };
    }
    const unusable = ref.field === 'sasl' ? unusableSaslValue(secret) : unusableTlsFiles(secret);
    if (unusable) {
      return {
        ok: false,
        problem: {
          reason: 'SecretInvalid',
          message: `${named}: ${unusable}. The pods are left as they are until it is changed`,
        },
      };
    }
    if (ref.field === 'tls') tlsHasCa = hasValue(secret, 'ca.crt');
    versions.push(`${ref.field}=${secret.metadata?.uid ?? ''}/${secret.metadata?.resourceVersion ?? ''}`);
  }
  return {
    ok: true,
    secrets: { tlsHasCa, ...(versions.length ? { revision: versions.join(',') } : {}) },
  };
}
