// Parsers for setting texts. Each names the flag (`what`) when it refuses a value, so the person
// starting the operator knows which one to fix.
import { ConfigError } from './config-error.ts';

/** Any non-empty text (an image reference, a name). */
export function text(value: string, what: string): string {
  if (!value.trim()) throw new ConfigError(`${what} must not be empty`);
  return value.trim();
}

/** A TCP port; 0 lets the system pick one (tests). */
export function port(value: string, what: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535)
    throw new ConfigError(`${what} must be a port number, got "${value}"`);
  return n;
}

/** true/false (also 1/0, yes/no). */
export function toggle(value: string, what: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(`${what} must be true or false, got "${value}"`);
}

/** A whole number of at least `minimum`. */
export function wholeNumber(minimum: number): (value: string, what: string) => number {
  return (value, what) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < minimum) {
      throw new ConfigError(`${what} must be a whole number of at least ${minimum}, got "${value}"`);
    }
    return n;
  };
}

/** A comma-separated list; blanks around and between items are dropped. */
export function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** A pino level name. */
export function logLevel(value: string, what: string): string {
  if (!levels.includes(value))
    throw new ConfigError(`${what} must be one of ${levels.join(', ')}, got "${value}"`);
  return value;
}
