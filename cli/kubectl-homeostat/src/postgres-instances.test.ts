import { describe, expect, it } from 'vitest';
import { instancesOf } from './postgres-instances.ts';

describe('instancesOf (the instances of a PostgreSQLCluster)', () => {
  it('are <cluster>-0 to <cluster>-(spec.instances - 1), in ordinal order', () => {
    expect(instancesOf('accounts', { spec: { instances: 11 } }).slice(8)).toEqual([
      'accounts-8',
      'accounts-9',
      'accounts-10',
    ]);
    expect(instancesOf('accounts', {})).toEqual([]);
  });

  it('include one the status still lists (a scale-down removing it), and nothing of another form', () => {
    const scalingDown = {
      spec: { instances: 2 },
      status: {
        instanceStatuses: [
          { name: 'accounts-0' },
          { name: 'accounts-2' },
          { name: 'accounts-x' },
          { name: 'accounts-01' },
          { name: 'orders-0' },
          {},
        ],
      },
    };
    expect(instancesOf('accounts', scalingDown)).toEqual(['accounts-0', 'accounts-1', 'accounts-2']);
  });
});
