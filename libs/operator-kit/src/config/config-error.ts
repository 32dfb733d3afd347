/** A configuration the operator cannot start with; the message says which flag or variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
