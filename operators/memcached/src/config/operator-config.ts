// The operator's configuration, from command-line flags with environment variables as fallback.
import { parseArgs } from 'node:util';
import { defaultMemcachedImage } from './default-image.ts';

export interface OperatorConfig {
  /** Namespaces to watch; empty watches all. */
  watchNamespaces: string[];
  /** Lease-based leader election (namespace and lease name), or undefined when off. */
  leaderElection: { namespace: string; leaseName: string } | undefined;
  /** This replica's name in the lease (the pod name). */
  podName: string | undefined;
  healthPort: number;
  metricsPort: number;
  memcachedImage: string;
  maxConcurrentReconciles: number;
  logLevel: string;
}

/** A configuration the operator cannot start with; the message says which flag or variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const usage = `memcached-operator [flags]   (each flag also reads the environment variable in brackets)
  --watch-namespaces a,b          namespaces to watch; empty = all [WATCH_NAMESPACES]
  --leader-elect true|false       Lease-based leader election; default true [LEADER_ELECT]
  --leader-election-namespace ns  namespace of the Lease; default the pod's [POD_NAMESPACE]
  --lease-name name               default memcached-operator [LEASE_NAME]
  --health-port n                 /healthz and /readyz; default 8081 [HEALTH_PORT]
  --metrics-port n                /metrics; default 8080 [METRICS_PORT]
  --memcached-image ref           image of Memcacheds that name none; default ${defaultMemcachedImage} [MEMCACHED_IMAGE]
  --max-concurrent-reconciles n   default 2 [MAX_CONCURRENT_RECONCILES]
  --log-level level               pino level; default info [LOG_LEVEL]`;

function port(value: string, what: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new ConfigError(`${what} must be a port number, got "${value}"`);
  return n;
}

function boolean(value: string, what: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(`${what} must be true or false, got "${value}"`);
}

/**
 * Reads the configuration from `argv` (flags win) and `env`. `serviceAccountNamespace` is the
 * namespace file Kubernetes mounts into pods, the last fallback for the Lease namespace.
 */
export function readConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  serviceAccountNamespace?: string,
): OperatorConfig {
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({
      args: [...argv],
      options: {
        'watch-namespaces': { type: 'string' },
        'leader-elect': { type: 'string' },
        'leader-election-namespace': { type: 'string' },
        'lease-name': { type: 'string' },
        'health-port': { type: 'string' },
        'metrics-port': { type: 'string' },
        'memcached-image': { type: 'string' },
        'max-concurrent-reconciles': { type: 'string' },
        'log-level': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\n${usage}`);
  }
  const get = (flag: string, variable: string): string | undefined => {
    const value = flags[flag];
    return typeof value === 'string' ? value : env[variable] || undefined;
  };

  const watchNamespaces = (get('watch-namespaces', 'WATCH_NAMESPACES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const elect = boolean(get('leader-elect', 'LEADER_ELECT') ?? 'true', '--leader-elect');
  const leaseNamespace = get('leader-election-namespace', 'POD_NAMESPACE') ?? serviceAccountNamespace;
  if (elect && !leaseNamespace) {
    throw new ConfigError(
      'leader election needs the Lease namespace: set --leader-election-namespace or POD_NAMESPACE, or --leader-elect=false',
    );
  }
  const image = get('memcached-image', 'MEMCACHED_IMAGE') ?? defaultMemcachedImage;
  const concurrency = Number(get('max-concurrent-reconciles', 'MAX_CONCURRENT_RECONCILES') ?? '2');
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigError('--max-concurrent-reconciles must be a whole number of at least 1');
  }
  return {
    watchNamespaces,
    leaderElection:
      elect && leaseNamespace
        ? { namespace: leaseNamespace, leaseName: get('lease-name', 'LEASE_NAME') ?? 'memcached-operator' }
        : undefined,
    podName: env['POD_NAME'] || undefined,
    healthPort: port(get('health-port', 'HEALTH_PORT') ?? '8081', '--health-port'),
    metricsPort: port(get('metrics-port', 'METRICS_PORT') ?? '8080', '--metrics-port'),
    memcachedImage: image,
    maxConcurrentReconciles: concurrency,
    logLevel: get('log-level', 'LOG_LEVEL') ?? 'info',
  };
}
