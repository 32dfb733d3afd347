// The PostgreSQL operator's own settings on top of the common ones (tested in libs/operator-kit).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@homeostat/operator-kit';
import { supportedMajorVersions } from '../api/postgres-versions.ts';
import { defaultPostgresImages } from './default-images.ts';
import { readConfig, usage } from './operator-config.ts';

describe('operator configuration', () => {
  it('defaults: an image per supported PostgreSQL version, probes every half second', () => {
    expect(readConfig([], { POD_NAMESPACE: 'ops' })).toMatchObject({
      leaderElection: { namespace: 'ops', leaseName: 'postgres-operator' },
      postgres17Image: defaultPostgresImages[17],
      postgres18Image: defaultPostgresImages[18],
      probeIntervalMs: 500,
    });
    expect(Object.keys(defaultPostgresImages).map(Number)).toEqual([...supportedMajorVersions]);
  });

  it('reads the flags before their environment variables', () => {
    const config = readConfig(
      ['--leader-elect=false', '--postgres-18-image=x/pg:18.1', '--probe-interval-ms=250'],
      {
        POSTGRES_18_IMAGE: 'y',
        POSTGRES_17_IMAGE: 'y/pg:17.6',
      },
    );
    expect(config).toMatchObject({
      postgres17Image: 'y/pg:17.6',
      postgres18Image: 'x/pg:18.1',
      probeIntervalMs: 250,
    });
  });

  it('refuses a probe interval below 100 ms, naming the flag, and lists every flag in the usage', () => {
    expect(() => readConfig(['--leader-elect=false', '--probe-interval-ms=10'], {})).toThrow(ConfigError);
    expect(() => readConfig(['--leader-elect=false', '--probe-interval-ms=10'], {})).toThrow(
      /--probe-interval-ms/,
    );
    for (const flag of ['--postgres-17-image', '--postgres-18-image', '--probe-interval-ms'])
      expect(usage).toContain(flag);
  });
});
