import { describe, expect, it } from 'vitest';
import { age, statusView, summaryTable } from './status-view.ts';

const now = Date.parse('2026-11-27T18:00:00Z');

// As the PostgreSQL operator writes it (docs/reference/postgresqlclusters…md).
const accounts = {
  kind: 'PostgreSQLCluster',
  metadata: { name: 'accounts', namespace: 'shop', generation: 2 },
  status: {
    observedGeneration: 2,
    phase: 'Healthy',
    instances: 3,
    readyInstances: 3,
    currentPrimary: 'accounts-0',
    timeline: 2,
    selector: 'postgres.homeostat.dev/cluster=accounts',
    instanceStatuses: [
      { name: 'accounts-0', role: 'primary', ready: true, timeline: 2, lsn: '0/3000060' },
      { name: 'accounts-1', role: 'replica', ready: true, timeline: 2, lsn: '0/3000060', lagBytes: 0 },
      { name: 'accounts-2', role: 'unknown', ready: false },
    ],
    backup: { lastArchivedWal: '000000020000000000000003', lastArchivedTime: '2026-11-27T17:59:00Z' },
    conditions: [
      {
        type: 'Available',
        status: 'True',
        reason: 'PrimaryAcceptingWrites',
        message: 'accounts-0 takes writes',
        lastTransitionTime: '2026-11-27T17:00:00Z',
      },
      {
        type: 'Degraded',
        status: 'True',
        reason: 'InstanceUnreachable',
        message: 'accounts-2 answers no SQL',
        lastTransitionTime: '2026-11-27T17:58:30Z',
      },
    ],
  },
};

describe('statusView (any Homeostat resource at a glance)', () => {
  it('shows phase, scalar fields, each list of objects as a table, objects on one line and conditions with their age', () => {
    expect(statusView(accounts, now)).toEqual([
      'accounts (PostgreSQLCluster, namespace shop): Healthy',
      '  instances       3',
      '  readyInstances  3',
      '  currentPrimary  accounts-0',
      '  timeline        2',
      '',
      'Instance statuses:',
      '  NAME        ROLE     READY  TIMELINE  LSN        LAG BYTES',
      '  accounts-0  primary  true   2         0/3000060',
      '  accounts-1  replica  true   2         0/3000060  0',
      '  accounts-2  unknown  false',
      '',
      'Backup: lastArchivedWal=000000020000000000000003, lastArchivedTime=2026-11-27T17:59:00Z',
      '',
      'Conditions:',
      '  TYPE       STATUS  REASON                  AGE  MESSAGE',
      '  Available  True    PrimaryAcceptingWrites  60m  accounts-0 takes writes',
      '  Degraded   True    InstanceUnreachable     90s  accounts-2 answers no SQL',
    ]);
  });

  it('marks the instances fenced by request in a FENCED column after the name, only when one is', () => {
    const fenced = {
      ...accounts,
      status: {
        instanceStatuses: [
          { name: 'accounts-0', role: 'primary', ready: true, fenced: false },
          { name: 'accounts-1', role: 'unknown', ready: false, fenced: true },
          { name: 'accounts-2', role: 'replica', ready: true },
        ],
      },
    };
    expect(statusView(fenced, now).slice(1)).toEqual([
      '',
      'Instance statuses:',
      '  NAME        FENCED  ROLE     READY',
      '  accounts-0          primary  true',
      '  accounts-1  yes     unknown  false',
      '  accounts-2          replica  true',
    ]);
    const noneFenced = {
      ...accounts,
      status: { instanceStatuses: [{ name: 'accounts-0', role: 'primary', ready: true, fenced: false }] },
    };
    expect(statusView(noneFenced, now).slice(1)).toEqual([
      '',
      'Instance statuses:',
      '  NAME        ROLE     READY',
      '  accounts-0  primary  true',
    ]);
  });

  it('says when the status describes an older spec, and when there is none yet', () => {
    const behind = { ...accounts, metadata: { ...accounts.metadata, generation: 3 } };
    expect(statusView(behind, now)[1]).toBe(
      '  (status of generation 2; the spec is at 3: the operator has not caught up)',
    );
    expect(statusView({ kind: 'Memcached', metadata: { name: 'sessions' } }, now)).toEqual([
      'sessions (Memcached)',
      '  no status yet: the operator has not reconciled it',
    ]);
  });

  it('lists resources one per line', () => {
    expect(
      summaryTable([
        accounts,
        { kind: 'EtcdCluster', metadata: { name: 'orders' }, status: { phase: 'Running' } },
      ]),
    ).toEqual([
      'KIND               NAME      PHASE',
      'PostgreSQLCluster  accounts  Healthy',
      'EtcdCluster        orders    Running',
    ]);
  });

  it('prints ages as kubectl does', () => {
    expect([
      age('2026-11-27T17:59:30Z', now),
      age('2026-11-27T15:00:00Z', now),
      age('2026-11-20T18:00:00Z', now),
    ]).toEqual(['30s', '3h', '7d']);
  });
});
