import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { defineOperatorConfig } from './operator-config.ts';
import { text } from './setting-parsers.ts';
import { widgetConfig as widgets } from '../test-support/widget-config.ts';

describe('operator configuration', () => {
  it('defaults: all namespaces, leader election on under the operator name, probes on 8081, metrics on 8080', () => {
    expect(widgets.read([], { POD_NAMESPACE: 'ops', POD_NAME: 'op-1' })).toEqual({
      watchNamespaces: [],
      leaderElection: { namespace: 'ops', leaseName: 'widget-operator' },
      podName: 'op-1',
      healthPort: 8081,
      metricsPort: 8080,
      maxConcurrentReconciles: 2,
      logLevel: 'info',
      widgetImage: 'example.test/widget:1',
      retainedBackups: 3,
    });
  });

  it('reads flags before environment variables, for common and own settings alike', () => {
    const config = widgets.read(
      [
        '--watch-namespaces',
        'a, b,',
        '--leader-elect=false',
        '--widget-image=x/widget:2',
        '--log-level=debug',
      ],
      {
        WATCH_NAMESPACES: 'c',
        WIDGET_IMAGE: 'y',
        METRICS_PORT: '9090',
        RETAINED_BACKUPS: '7',
        LOG_LEVEL: 'warn',
      },
    );
    expect(config).toMatchObject({
      watchNamespaces: ['a', 'b'],
      leaderElection: undefined,
      widgetImage: 'x/widget:2',
      retainedBackups: 7,
      metricsPort: 9090,
      logLevel: 'debug',
    });
  });

  it('takes the Lease from flags or variables, and its namespace last from the service account file', () => {
    expect(widgets.read([], {}, 'from-file').leaderElection).toEqual({
      namespace: 'from-file',
      leaseName: 'widget-operator',
    });
    expect(
      widgets.read(
        ['--leader-election-namespace=flag-ns'],
        { POD_NAMESPACE: 'env-ns', LEASE_NAME: 'l' },
        'file',
      ).leaderElection,
    ).toEqual({ namespace: 'flag-ns', leaseName: 'l' });
  });

  it('treats an empty environment variable as unset', () => {
    expect(widgets.read([], { POD_NAMESPACE: 'x', WIDGET_IMAGE: '', HEALTH_PORT: '' })).toMatchObject({
      widgetImage: 'example.test/widget:1',
      healthPort: 8081,
    });
  });

  it('refuses what it cannot run with, naming the flag', () => {
    expect(() => widgets.read([], {})).toThrow(/--leader-election-namespace or POD_NAMESPACE/);
    expect(() => widgets.read(['--health-port=http'], { POD_NAMESPACE: 'x' })).toThrow(/--health-port/);
    expect(() => widgets.read(['--metrics-port=70000'], { POD_NAMESPACE: 'x' })).toThrow(/--metrics-port/);
    expect(() => widgets.read(['--leader-elect=maybe'], { POD_NAMESPACE: 'x' })).toThrow(ConfigError);
    expect(() => widgets.read(['--max-concurrent-reconciles=0'], { POD_NAMESPACE: 'x' })).toThrow(
      /--max-concurrent-reconciles must be a whole number of at least 1/,
    );
    expect(() => widgets.read(['--log-level=loud'], { POD_NAMESPACE: 'x' })).toThrow(
      /--log-level must be one of/,
    );
    expect(() => widgets.read([], { POD_NAMESPACE: 'x', RETAINED_BACKUPS: '-1' })).toThrow(
      /--retained-backups/,
    );
    expect(() => widgets.read(['--nonsense'], {})).toThrow(/Unknown option '--nonsense'/);
    expect(() => widgets.read(['stray'], {})).toThrow(ConfigError);
  });

  it('prints a usage line per flag, own settings last, with defaults and variables', () => {
    const lines = widgets.usage.split('\n');
    expect(lines[0]).toMatch(/^widget-operator \[flags\]/);
    expect(lines.slice(1).map((l) => /--([a-z-]+)/.exec(l)?.[1])).toEqual([
      'watch-namespaces',
      'leader-elect',
      'leader-election-namespace',
      'lease-name',
      'health-port',
      'metrics-port',
      'max-concurrent-reconciles',
      'log-level',
      'widget-image',
      'retained-backups',
    ]);
    expect(widgets.usage).toContain(
      'image of Widgets that name none; default example.test/widget:1 [WIDGET_IMAGE]',
    );
  });

  it('refuses an operator setting that shadows a common one', () => {
    expect(() =>
      defineOperatorConfig('x', {
        logLevel: { flag: 'level', env: 'LEVEL', placeholder: 'l', help: '', default: 'info', parse: text },
      }),
    ).toThrow(/"logLevel" is one every operator already has/);
    expect(() =>
      defineOperatorConfig('x', {
        verbosity: {
          flag: 'log-level',
          env: 'VERBOSITY',
          placeholder: 'l',
          help: '',
          default: 'info',
          parse: text,
        },
      }),
    ).toThrow(/two settings read flag "log-level"/);
  });
});
