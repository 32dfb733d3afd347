// Kubernetes quantities compared by value: the API server rewrites them into a canonical form
// ("1024Mi" becomes "1Gi", "0.5" becomes "500m"), so comparing strings would see a change that is
// not there and write on every reconcile.

const suffixes: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const pattern = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The value of a quantity such as "128Mi" or "250m", or undefined when it is not one. */
export function quantityValue(quantity: string | number): number | undefined {
  if (typeof quantity === 'number') return quantity;
  const match = pattern.exec(quantity.trim());
  if (!match?.[1]) return undefined;
  const base = Number(match[1]);
  if (match[2]) return base * 10 ** Number(match[2].slice(1));
  return base * (suffixes[match[3] ?? ''] ?? 1);
}

/** True when two resource lists ask for the same amounts (absent and absent are equal). */
export function sameResourceList(
  desired: Record<string, string> | undefined,
  actual: Record<string, string | number> | undefined,
): boolean {
  const keys = new Set([...Object.keys(desired ?? {}), ...Object.keys(actual ?? {})]);
  for (const key of keys) {
    const want = desired?.[key];
    const have = actual?.[key];
    if (want === undefined || have === undefined) return false;
    const a = quantityValue(want);
    const b = quantityValue(have);
    if (a === undefined || b === undefined || Math.abs(a - b) > Math.abs(a) * 1e-12) return false;
  }
  return true;
}
