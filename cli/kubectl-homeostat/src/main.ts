#!/usr/bin/env node
// kubectl homeostat: the plugin's entry point, wiring only (arguments → command → output).
// kubectl runs `kubectl-homeostat` from PATH for `kubectl homeostat …`, passing every argument.
import { parseArguments, type Invocation } from './arguments.ts';
import { backup } from './commands/backup.ts';
import { etcdctlPod, psqlPod, runSession } from './commands/client-session.ts';
import { fence } from './commands/fence.ts';
import { promote } from './commands/promote.ts';
import { report } from './commands/report.ts';
import { restart } from './commands/restart.ts';
import { status } from './commands/status.ts';
import { UsageError } from './kinds.ts';
import { parseDuration } from './wait.ts';

const usage = `kubectl homeostat: Homeostat's custom resources at a glance, and what is done to them by hand.

  kubectl homeostat status [TYPE/]NAME        one resource: status fields, instances or members, conditions
  kubectl homeostat status                    every Homeostat resource in the namespace
  kubectl homeostat promote CLUSTER INSTANCE  PostgreSQL switchover (spec.primary), waits until it takes writes
  kubectl homeostat fence CLUSTER INSTANCE... PostgreSQL stopped in those instances (or --all), pods and data
                                              kept, no Service routes to them; waits until their pods are fenced
  kubectl homeostat unfence CLUSTER INSTANCE...
                                              PostgreSQL started again (or --all); waits until Ready and Available
  kubectl homeostat backup CLUSTER            a PostgreSQLBackup or EtcdBackup now; --wait waits for it
  kubectl homeostat restart [TYPE/]NAME       rolling restart of a Memcached, EtcdCluster or PostgreSQLCluster,
                                              the operator's safe way; waits until every pod is new and Ready
  kubectl homeostat psql CLUSTER [-- ARGS]    psql as the application (its Secret, TLS verify-full); --superuser
  kubectl homeostat etcdctl CLUSTER [-- ARGS] etcdctl with the client certificate (default: endpoint status)
  kubectl homeostat report [TYPE/]NAME        a support bundle (.tar.gz, -o FILE): the resource, its objects,
                                              Events, logs and the operators' logs; no Secret, values redacted

TYPE: pgc, pgbackup, etcdc, etcdbk, memcached. kubectl's -n/--namespace, --context and --kubeconfig apply.
Waiting: --timeout (default 300s); promote, fence, unfence and restart wait unless --no-wait.`;

function timeout(invocation: Invocation): { timeoutMs: number } {
  return { timeoutMs: parseDuration(invocation.options.get('timeout') ?? '300s') };
}

async function run(invocation: Invocation): Promise<number> {
  const { target, command, positional, options, rest } = invocation;
  const print = (lines: readonly string[]) => process.stdout.write(`${lines.join('\n')}\n`);
  switch (command) {
    case 'status':
      print(await status(target, positional[0]));
      return 0;
    case 'promote':
      print(
        await promote(
          target,
          positional[0],
          positional[1],
          options.has('no-wait') ? undefined : timeout(invocation),
        ),
      );
      return 0;
    case 'fence':
    case 'unfence':
      print(
        await fence(
          target,
          command,
          { cluster: positional[0], instances: positional.slice(1), all: options.has('all') },
          options.has('no-wait') ? undefined : timeout(invocation),
        ),
      );
      return 0;
    case 'restart':
      print(await restart(target, positional[0], options.has('no-wait') ? undefined : timeout(invocation)));
      return 0;
    case 'backup':
      print(await backup(target, positional[0], options.has('wait') ? timeout(invocation) : undefined));
      return 0;
    case 'psql':
    case 'etcdctl': {
      const cluster = positional[0];
      if (!cluster) throw new UsageError(`${command} takes CLUSTER`);
      const pod =
        command === 'psql'
          ? await psqlPod(target, cluster, rest, options.has('superuser'))
          : await etcdctlPod(target, cluster, rest);
      return runSession(target, pod, Boolean(process.stdin.isTTY && process.stdout.isTTY));
    }
    case 'report': {
      const resource = positional[0];
      if (!resource) throw new UsageError('report takes [TYPE/]NAME');
      print(await report(target, resource, options.get('output') ?? options.get('o')));
      return 0;
    }
    case undefined:
    case 'help':
      print([usage]);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

// No top-level await: the installed plugin is one CommonJS file without an extension, which any
// Node from 20 on runs as it is.
run(parseArguments(process.argv.slice(2))).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`kubectl homeostat: ${error.message}\n\n${usage}`);
      process.exitCode = 2;
    } else {
      console.error(`kubectl homeostat: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  },
);
