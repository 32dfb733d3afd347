// The machine's load average, printed beside figures: on a shared machine a figure measured while
// other jobs ran is not comparable with one measured on an idle machine.
import { loadavg } from 'node:os';

/** The 1, 5 and 15 minute load averages, as `uptime` prints them. */
export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
}
