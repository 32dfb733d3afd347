// What kubectl hands the plugin, split: kubectl's own flags (passed on), the command, its
// arguments, its flags, and what follows `--` (for psql and etcdctl).
import { UsageError } from './kinds.ts';
import type { KubectlTarget } from './kubectl.ts';

export interface Invocation {
  target: KubectlTarget;
  command: string | undefined;
  positional: string[];
  /** --name=value or --name value; a flag alone is "true". */
  options: Map<string, string>;
  /** After `--`, untouched. */
  rest: string[];
}

const kubectlFlags = new Map([
  ['-n', '--namespace'],
  ['--namespace', '--namespace'],
  ['--context', '--context'],
  ['--kubeconfig', '--kubeconfig'],
]);

/** The plugin's own flags that take a value (any other flag is a switch). */
const valued = new Set(['--timeout', '--output', '-o', '--instance']);

export function parseArguments(argv: readonly string[]): Invocation {
  const flags: string[] = [];
  let namespace: string | undefined;
  const positional: string[] = [];
  const options = new Map<string, string>();
  let rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    const [name = '', inline] = arg.startsWith('--') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const kubectlFlag = kubectlFlags.get(name);
    const takesValue = kubectlFlag !== undefined || valued.has(name);
    let value = inline;
    if (takesValue && value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
    }
    if (kubectlFlag) {
      flags.push(`${kubectlFlag}=${value}`);
      if (kubectlFlag === '--namespace') namespace = value;
    } else if (name.startsWith('-') && name.length > 1) {
      options.set(name.replace(/^-+/, ''), value ?? 'true');
    } else {
      positional.push(arg);
    }
  }
  const [command, ...args] = positional;
  return { target: { flags, namespace }, command, positional: args, options, rest };
}
