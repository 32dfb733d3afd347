// The library chart every operator chart depends on passes the real helm's lint on its own.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helm } from '../testing/helm-chart.ts';
import { repoRoot } from './operator-chart.ts';

describe('charts/homeostat-operator-lib with helm', () => {
  it('passes helm lint --strict as a library chart', () => {
    const linted = helm(['lint', '--strict', join(repoRoot, 'charts', 'homeostat-operator-lib')]);
    expect(linted.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(linted.status).toBe(0);
  });
});
