// One primary and N replicas started through the entrypoint, a write router in front, and the
// Fencing/InstanceActions the engine needs, implemented with real effects on those processes.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { logTail, waitUntil } from '@homeostat/testing';
import type { Fencing, InstanceActions } from '../failover/actions.ts';
import { FailoverEngine, type EngineEvent, type FailoverEngineOptions } from '../failover/engine.ts';
import { withConnection, defaultConnectOptions, type InstanceEndpoint } from '../instance/instance.ts';
import { observeInstance } from '../instance/observe.ts';
import { PostgresTestBed, type TestInstance } from './postgres-processes.ts';
import { startWriteRouter, type WriteRouter } from './write-router.ts';
import { ackedTable } from './write-load.ts';

export interface TestClusterOptions {
  /** Instances in all, named pg-0 (the first primary), pg-1, ... */
  size: number;
  label: string;
  parameters?: string;
}

export class TestCluster {
  readonly bed: PostgresTestBed;
  readonly endpoints: InstanceEndpoint[] = [];
  readonly events: EngineEvent[] = [];
  readonly fenced: string[] = [];
  /** Instances whose data directory is broken before they rejoin, to force a re-clone. */
  readonly corruptBeforeRejoin = new Set<string>();
  router!: WriteRouter;
  readonly #options: TestClusterOptions;

  constructor(options: TestClusterOptions) {
    this.#options = options;
    this.bed = new PostgresTestBed(options.label);
  }

  /** Starts pg-0 as primary, the others as its replicas, the router, and the `acked` table. */
  async start(): Promise<this> {
    const parameters = this.#options.parameters;
    const primary = await this.bed.start('pg-0', { role: 'primary', ...(parameters ? { parameters } : {}) });
    await this.sql('pg-0', ackedTable);
    const replicas = await Promise.all(
      Array.from({ length: this.#options.size - 1 }, (_, i) =>
        this.bed.start(`pg-${i + 1}`, { role: 'replica', primary, ...(parameters ? { parameters } : {}) }),
      ),
    );
    for (const i of [primary, ...replicas]) this.endpoints.push({ name: i.name, host: i.host, port: i.port });
    this.router = await startWriteRouter(primary);
    return this;
  }

  instance(name: string): TestInstance {
    const found = this.bed.instances.get(name);
    if (!found) throw new Error(`no instance ${name}`);
    return found;
  }

  /** Fencing that kills the instance's processes and checks they are gone. */
  readonly fencing: Fencing = {
    fence: async (instance) => {
      const target = this.instance(instance.name);
      await target.kill9();
      if (target.isRunning()) throw new Error(`${instance.name} is still running after SIGKILL`);
      this.fenced.push(instance.name);
    },
  };

  /** Pod actions: a clean fast shutdown, and a restart of the entrypoint as a replica. */
  readonly actions: InstanceActions = {
    stopCleanly: (instance) => this.instance(instance.name).stopFast(),
    rejoinAsReplica: async (instance, primary) => {
      const target = this.instance(instance.name);
      await target.kill9();
      if (this.corruptBeforeRejoin.has(instance.name)) rmSync(join(target.dataDir, 'global', 'pg_control'));
      const parameters = this.#options.parameters;
      await this.bed.start(instance.name, {
        role: 'replica',
        primary,
        ...(parameters ? { parameters } : {}),
      });
    },
  };

  /** An engine over this cluster, with test-sized timings unless overridden. */
  engine(overrides: Partial<FailoverEngineOptions> = {}): FailoverEngine {
    return new FailoverEngine({
      instances: this.endpoints,
      primary: 'pg-0',
      credentials: this.bed.superuser,
      fencing: this.fencing,
      routing: this.router,
      actions: this.actions,
      failoverDelayMs: 1000,
      probeIntervalMs: 250,
      onEvent: (event) => this.events.push(event),
      ...overrides,
    });
  }

  /** Runs one statement on an instance as the superuser. */
  async sql<R extends Record<string, unknown> = Record<string, unknown>>(
    name: string,
    text: string,
    params: unknown[] = [],
  ): Promise<R[]> {
    const result = await withConnection(this.instance(name), this.bed.superuser, defaultConnectOptions, (c) =>
      c.query<R>(text, params),
    );
    return result.rows;
  }

  /** Waits until `replica` streams from `primary` and has replayed everything the primary has now. */
  async waitCaughtUp(replica: string, primary: string, timeoutMs = 60_000): Promise<void> {
    const p = this.instance(primary);
    await waitUntil(
      `${replica} streams from ${primary} and has replayed its WAL`,
      async () => {
        const [ps, rs] = await Promise.all([
          observeInstance(p, this.bed.superuser, defaultConnectOptions),
          observeInstance(this.instance(replica), this.bed.superuser, defaultConnectOptions),
        ]);
        return (
          ps.reachable &&
          ps.role === 'primary' &&
          rs.reachable &&
          rs.role === 'replica' &&
          rs.walReceiver?.status === 'streaming' &&
          rs.walReceiver.senderPort === p.port &&
          rs.replayLsn !== undefined &&
          rs.replayLsn >= ps.currentLsn
        );
      },
      { timeoutMs, intervalMs: 200, describe: () => logTail(this.instance(replica).logFile, 25) },
    );
  }

  /** The ids in `acked` on one instance, sorted. */
  async ids(name: string): Promise<number[]> {
    const rows = await this.sql<{ id: string }>(name, 'SELECT id FROM acked ORDER BY id');
    return rows.map((r) => Number(r.id));
  }

  async cleanup(): Promise<void> {
    await this.router?.close();
    await this.bed.cleanup();
  }
}

/** Ids the writer saw acknowledged that `present` lacks. */
export function missingIds(acked: readonly { id: number }[], present: readonly number[]): number[] {
  const have = new Set(present);
  return acked.map((a) => a.id).filter((id) => !have.has(id));
}
