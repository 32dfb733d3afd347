// The SASL database memcached checks passwords against: built at pod start, by an init container
// running this script in the memcached image, from the Secret spec.sasl names (ADR 0403). The
// integration test runs the same script with the machine's saslpasswd2.
import type { PodLayout } from './memcached-command.ts';

/**
 * The init container's script (POSIX sh). It reads the directories from CREDENTIALS_DIR and
 * SASL_DIR. The password reaches saslpasswd2 on stdin only: never on a command line (visible in
 * /proc to the whole pod), in the environment, or in what it prints. saslpasswd2 -p drops one
 * trailing newline. The user is added in saslpasswd2's default realm, the host name, which is the
 * pod's name in every container of the pod, and so the realm memcached looks users up in; `--`
 * keeps a user that starts with "-" from being read as an option. The Secret's files are copied
 * next to the database first and the database is built from the copies: the metrics sidecar logs
 * in with them, so it keeps the credentials memcached knows when the kubelet rewrites the mounted
 * Secret after a rotation (memcached reads the database only when its pod starts).
 */
export const saslDatabaseScript = `set -eu
[ -s "$CREDENTIALS_DIR/username" ] || { echo "the SASL Secret has no username (or an empty one)" >&2; exit 1; }
[ -s "$CREDENTIALS_DIR/password" ] || { echo "the SASL Secret has no password (or an empty one)" >&2; exit 1; }
# A rerun (a recreated pod sandbox reruns init containers; the in-memory volume stays) starts over:
# -f replaces the read-only copies of the last run, and a fresh database keeps no rotated-out user.
rm -f "$SASL_DIR/sasldb"
cp -f "$CREDENTIALS_DIR/username" "$CREDENTIALS_DIR/password" "$SASL_DIR/"
user=$(cat "$SASL_DIR/username")
saslpasswd2 -p -c -a memcached -f "$SASL_DIR/sasldb" -- "$user" < "$SASL_DIR/password"
# PLAIN only: memcached's clients (and its sidecar) use it, and it needs no other plugin.
printf 'mech_list: plain\\nsasldb_path: %s/sasldb\\n' "$SASL_DIR" > "$SASL_DIR/memcached.conf"
echo "SASL database written for user $user"
`;

/** The environment the script reads its directories from. */
export function saslDatabaseEnv(layout: PodLayout): Record<string, string> {
  return { CREDENTIALS_DIR: layout.saslCredentialsDir, SASL_DIR: layout.saslDir };
}
