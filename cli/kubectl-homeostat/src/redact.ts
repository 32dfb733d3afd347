// What a support bundle must never carry, whatever the operators and operands printed: passwords
// (key=value, key: value, JSON "key":"value" plain or escaped, an env entry named like one, a
// connection URI's user:password@), private keys, bearer tokens. The bundle holds no Secret object
// at all (the plugin never reads one); this is the second line, for text that should not have held
// one either. Keys that hold a name or a path, not a value (secretName, secretKeyRef,
// PG_SUPERUSER_SECRET_DIR), are kept.

const key = '[A-Za-z0-9_-]*(?:password|passwd|passphrase|secret|token)[A-Za-z0-9_-]*';
const namesOnly = /(?:name|ref|dir|file|path)$/i;

type Rule = readonly [RegExp, (match: string, ...groups: string[]) => string];

/** Replaces the value group unless the key only names something. */
const valueOf =
  (keyGroup: number, valueGroup: number): Rule[1] =>
  (match, ...groups) => {
    const found = groups[keyGroup - 1] ?? '';
    const value = groups[valueGroup - 1] ?? '';
    return namesOnly.test(found) || value === '' ? match : match.replace(value, '[REDACTED]');
  };

const rules: readonly Rule[] = [
  [
    /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
    () => '[REDACTED PRIVATE KEY]',
  ],
  // scheme://user:password@host
  [/([a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]+:)[^\s@'"]+@/gi, (_, prefix: string) => `${prefix}[REDACTED]@`],
  [/(\bBearer\s+)[A-Za-z0-9._~+/=-]+/g, (_, prefix: string) => `${prefix}[REDACTED]`],
  // {"name":"PG_PASSWORD","value":"…"}: an environment entry
  [
    new RegExp(`"name"\\s*:\\s*"(${key})"\\s*,\\s*"value"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`, 'gi'),
    valueOf(1, 2),
  ],
  // "password": "…" in JSON, and \"password\":\"…\" in JSON inside a string
  [new RegExp(`"(${key})"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`, 'gi'), valueOf(1, 2)],
  [new RegExp(`\\\\"(${key})\\\\"\\s*:\\s*\\\\"((?:[^\\\\]|\\\\[^"])*)\\\\"`, 'gi'), valueOf(1, 2)],
  // password=…, PASSWORD: …
  [new RegExp(`\\b(${key})(\\s*[=:]\\s*)('[^']*'|[^\\s,;&"'{}]+)`, 'gi'), valueOf(1, 3)],
  // PASSWORD '…' (SQL): quoted only, or "Secret accounts-app" would go too
  [new RegExp(`\\b(${key})(\\s+)('[^']*')`, 'gi'), valueOf(1, 3)],
];

/** `text` with every secret-looking value replaced by [REDACTED]. */
export function redact(text: string): string {
  return rules.reduce((current, [pattern, replace]) => current.replace(pattern, replace), text);
}
