/** A WAL position ("16/B374D848") as a byte offset, so positions compare and subtract exactly. */
export type Lsn = bigint;

/** Parses PostgreSQL's textual LSN; throws on anything else. */
export function parseLsn(text: string): Lsn {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match?.[1] || !match[2]) throw new Error(`not a PostgreSQL LSN: '${text}'`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** Formats a byte offset the way PostgreSQL prints an LSN. */
export function formatLsn(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** The larger of two positions; `undefined` counts as "nothing known". */
export function maxLsn(a: Lsn | undefined, b: Lsn | undefined): Lsn | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}
