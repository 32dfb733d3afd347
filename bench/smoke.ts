// npm run bench:smoke: every benchmark (bench/**/*.bench.ts) at its smoke size (BENCH_SMOKE=1),
// one after the other, so that a benchmark that no longer runs to its end fails CI. Each must
// exit 0 and end its stdout with its JSON figures; nothing is asserted about time. A benchmark
// added later runs here without being listed. Each one dies with this runner, however it ends.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { diesWithParent } from '@homeostat/testing';

const here = dirname(fileURLToPath(import.meta.url));
// A hung benchmark must fail CI rather than hold it: far above what any smoke run takes.
const benchTimeoutMs = 10 * 60_000;
const say = (line: string) => console.error(`bench:smoke ${line}`);

const benches = readdirSync(here, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.bench.ts') && !file.split('/').includes('node_modules'))
  .sort();
if (benches.length === 0) throw new Error(`no *.bench.ts under ${here}`);

interface Outcome {
  bench: string;
  seconds: number;
  problem?: string;
}

let stopping: NodeJS.Signals | undefined;
let current: ReturnType<typeof spawn> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopping = signal;
    // The benchmark stops what it started on SIGTERM; the loop below then exits.
    current?.kill('SIGTERM');
  });
}

function run(bench: string): Promise<Outcome> {
  const started = performance.now();
  const [file, args] = diesWithParent(process.execPath, [join(here, bench)]);
  const child = spawn(file, args, {
    env: { ...process.env, BENCH_SMOKE: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  current = child;
  let lastLine = '';
  createInterface({ input: child.stdout }).on('line', (line) => {
    process.stdout.write(`${line}\n`);
    if (line.trim()) lastLine = line;
  });
  const timer = setTimeout(() => {
    say(`${bench} still running after ${benchTimeoutMs / 1000} s: stopping it`);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
  }, benchTimeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
      if (code !== 0) return resolve({ bench, seconds, problem: `exited with ${code ?? signal}` });
      try {
        const figures: unknown = JSON.parse(lastLine);
        if (typeof figures !== 'object' || figures === null) throw new Error('not an object');
        resolve({ bench, seconds });
      } catch {
        resolve({
          bench,
          seconds,
          problem: `did not end with its JSON figures (last line: ${lastLine || 'none'})`,
        });
      }
    });
  });
}

const outcomes: Outcome[] = [];
for (const bench of benches) {
  if (stopping) break;
  say(`${bench}: starting`);
  const outcome = await run(bench);
  outcomes.push(outcome);
  say(`${bench}: ${outcome.problem ?? 'ok'} in ${outcome.seconds} s`);
}
const failed = outcomes.filter((o) => o.problem);
say(
  `${outcomes.length - failed.length} of ${benches.length} benchmarks ran to their end in ` +
    `${outcomes.reduce((sum, o) => sum + o.seconds, 0).toFixed(0)} s` +
    (failed.length ? `; failed: ${failed.map((o) => `${o.bench} (${o.problem})`).join(', ')}` : ''),
);
if (stopping) process.exit(128 + constants.signals[stopping]);
process.exitCode = failed.length || outcomes.length < benches.length ? 1 : 0;
