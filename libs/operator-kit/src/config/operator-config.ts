// An operator's configuration: command-line flags first, then environment variables (what the
// charts set), then defaults. The settings every operator has are read here; each operator adds
// its own (an operand image, a backup schedule) as `Setting`s, parsed and documented the same way.
import { parseArgs } from 'node:util';
import { ConfigError } from './config-error.ts';
import { list, logLevel, port, toggle, wholeNumber } from './setting-parsers.ts';

/** One operator-specific setting: a flag, the variable read when the flag is absent, a default. */
export interface Setting<T> {
  /** The flag without its dashes, e.g. "memcached-image". */
  flag: string;
  /** The environment variable read when the flag is not given, e.g. "MEMCACHED_IMAGE". */
  env: string;
  /** What the value looks like in the usage text, e.g. "ref". */
  placeholder: string;
  /** What it does, for the usage text (the default is appended). */
  help: string;
  /** The text used when neither the flag nor the variable is set; parsed like any other. */
  default: string;
  /** Turns the text into the value; throws a ConfigError that names `what` when it cannot. */
  parse: (text: string, what: string) => T;
}

/** Operator-specific settings by the config property they fill. */
export type Settings = Record<string, Setting<unknown>>;

/** What every operator reads, whatever it manages. */
export interface CommonOperatorConfig {
  /** Namespaces to watch; empty watches all. */
  watchNamespaces: string[];
  /** Lease-based leader election (namespace and lease name), or undefined when off. */
  leaderElection: { namespace: string; leaseName: string } | undefined;
  /** This replica's name in the lease (the pod name). */
  podName: string | undefined;
  healthPort: number;
  metricsPort: number;
  /** Custom resources reconciled at once (never two for the same one). */
  maxConcurrentReconciles: number;
  /** pino level. */
  logLevel: string;
}

/** The common configuration plus the values of an operator's own settings. */
export type OperatorConfig<S extends Settings = Record<never, never>> = CommonOperatorConfig & {
  [K in keyof S]: S[K] extends Setting<infer T> ? T : never;
};

/** Reads a configuration; `serviceAccountNamespace` is the last fallback for the Lease namespace. */
export type ConfigReader<C extends CommonOperatorConfig> = (
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  serviceAccountNamespace?: string,
) => C;

export interface OperatorConfigDefinition<S extends Settings> {
  read: ConfigReader<OperatorConfig<S>>;
  /** The usage text printed with a configuration error. */
  usage: string;
}

// The settings every operator shares, in the order the usage text lists them.
const common = {
  watchNamespaces: {
    flag: 'watch-namespaces',
    env: 'WATCH_NAMESPACES',
    placeholder: 'a,b',
    help: 'namespaces to watch; empty = all',
    default: '',
    parse: list,
  },
  leaderElect: {
    flag: 'leader-elect',
    env: 'LEADER_ELECT',
    placeholder: 'true|false',
    help: 'Lease-based leader election',
    default: 'true',
    parse: toggle,
  },
  leaseNamespace: {
    flag: 'leader-election-namespace',
    env: 'POD_NAMESPACE',
    placeholder: 'ns',
    help: "namespace of the Lease; default the pod's",
    default: '',
    parse: (text: string) => text,
  },
  leaseName: {
    flag: 'lease-name',
    env: 'LEASE_NAME',
    placeholder: 'name',
    help: 'name of the Lease; default the operator name',
    default: '',
    parse: (text: string) => text,
  },
  healthPort: {
    flag: 'health-port',
    env: 'HEALTH_PORT',
    placeholder: 'n',
    help: '/healthz and /readyz',
    default: '8081',
    parse: port,
  },
  metricsPort: {
    flag: 'metrics-port',
    env: 'METRICS_PORT',
    placeholder: 'n',
    help: '/metrics',
    default: '8080',
    parse: port,
  },
  maxConcurrentReconciles: {
    flag: 'max-concurrent-reconciles',
    env: 'MAX_CONCURRENT_RECONCILES',
    placeholder: 'n',
    help: 'custom resources reconciled at once',
    default: '2',
    parse: wholeNumber(1),
  },
  logLevel: {
    flag: 'log-level',
    env: 'LOG_LEVEL',
    placeholder: 'level',
    help: 'pino level',
    default: 'info',
    parse: logLevel,
  },
} satisfies Settings;

/**
 * Defines how an operator named `name` reads its configuration: the common settings (watched
 * namespaces, leader election, probe and metrics ports, concurrency, log level, pod name) plus
 * `settings`, its own. Flags win over environment variables, which win over defaults.
 */
export function defineOperatorConfig<S extends Settings>(
  name: string,
  settings: S,
): OperatorConfigDefinition<S> {
  for (const key of Object.keys(settings)) {
    if (key in common) throw new Error(`${name}: setting "${key}" is one every operator already has`);
  }
  const all: Settings = { ...common, ...settings };
  for (const field of ['flag', 'env'] as const) {
    const names = Object.values(all).map((s) => s[field]);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new Error(`${name}: two settings read ${field} "${twice}"`);
  }
  const usage = usageText(name, all);

  const read: ConfigReader<OperatorConfig<S>> = (argv, env, serviceAccountNamespace) => {
    let flags: Record<string, string | boolean | undefined>;
    try {
      flags = parseArgs({
        args: [...argv],
        options: Object.fromEntries(Object.values(all).map((s) => [s.flag, { type: 'string' as const }])),
        strict: true,
        allowPositionals: false,
      }).values;
    } catch (error) {
      throw new ConfigError(`${(error as Error).message}\n${usage}`);
    }
    // The text of a setting: its flag, else its variable (an empty variable counts as unset).
    const given = (setting: Setting<unknown>): string | undefined => {
      const value = flags[setting.flag];
      return typeof value === 'string' ? value : env[setting.env] || undefined;
    };
    const value = <T>(setting: Setting<T>): T =>
      setting.parse(given(setting) ?? setting.default, `--${setting.flag}`);

    const elect = value(common.leaderElect);
    const leaseNamespace = given(common.leaseNamespace) ?? serviceAccountNamespace;
    if (elect && !leaseNamespace) {
      throw new ConfigError(
        'leader election needs the Lease namespace: set --leader-election-namespace or POD_NAMESPACE, or --leader-elect=false',
      );
    }
    const own = Object.fromEntries(Object.entries(settings).map(([key, setting]) => [key, value(setting)]));
    const config: CommonOperatorConfig = {
      watchNamespaces: value(common.watchNamespaces),
      leaderElection:
        elect && leaseNamespace
          ? { namespace: leaseNamespace, leaseName: given(common.leaseName) ?? name }
          : undefined,
      podName: env['POD_NAME'] || undefined,
      healthPort: value(common.healthPort),
      metricsPort: value(common.metricsPort),
      maxConcurrentReconciles: value(common.maxConcurrentReconciles),
      logLevel: value(common.logLevel),
    };
    // `own` holds exactly the keys of S, each parsed by its Setting<T>: the mapped type's values.
    return { ...config, ...own } as OperatorConfig<S>;
  };
  return { read, usage };
}

function usageText(name: string, settings: Settings): string {
  const lines = Object.values(settings).map((s) => {
    const flag = `  --${s.flag} ${s.placeholder}`.padEnd(34);
    const help = s.default ? `${s.help}; default ${s.default}` : s.help;
    return `${flag}${help} [${s.env}]`;
  });
  return [`${name} [flags]   (each flag also reads the environment variable in brackets)`, ...lines].join(
    '\n',
  );
}
