// SCRAM-SHA-256 verifiers (RFC 5802, RFC 7677) as PostgreSQL stores them in pg_authid. The
// operator sends a role's password as its verifier, never in clear: PostgreSQL stores a
// `SCRAM-SHA-256$...` string as it is, so whatever the server logs or records of the statement
// (log_statement, a failed statement, pg_stat_statements) holds no password.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** PostgreSQL's default (scram_iterations), and what its own client libraries use. */
export const scramIterations = 4096;

/** PostgreSQL's salt length in bytes. */
const saltBytes = 16;

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();

/**
 * The verifier of `password`: `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`.
 * `salt` is random unless given (tests compare with a verifier PostgreSQL computed). Passwords are
 * printable ASCII (the operator's are base64url), for which SASLprep changes nothing; any other
 * is refused rather than risk a verifier PostgreSQL would not match. The error never holds it.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(saltBytes)): string {
  if (password.length === 0 || !/^[\x20-\x7e]+$/.test(password)) {
    throw new Error('a password must be non-empty printable ASCII to be sent as a SCRAM verifier');
  }
  const salted = pbkdf2Sync(password, salt, scramIterations, 32, 'sha256');
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  const b64 = (b: Buffer) => b.toString('base64');
  return `SCRAM-SHA-256$${scramIterations}:${b64(salt)}$${b64(storedKey)}:${b64(serverKey)}`;
}
