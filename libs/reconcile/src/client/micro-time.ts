/** Now (or `date`) as a Kubernetes MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
