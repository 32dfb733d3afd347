// One engine snapshot in a process of its own, bundled and started as the operator image starts
// its bundle, so bench:snapshot can time it with the image's Node flags (--jitless, ADR 0601) as
// well as with V8's JIT. Prints one JSON line: seconds, bytes, sha256, and the seconds of each
// step of takeBackup (its onPhase), with what the sha256 alone costs on this thread.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { fileSnapshotSink, readClusterHealth, takeBackup } from '@homeostat/etcd-operator';

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' },
    dir: { type: 'string' },
    name: { type: 'string' },
  },
});
const { endpoint, dir, name } = values;
if (!endpoint || !dir || !name) throw new Error('usage: --endpoint URL --dir DIR --name FILE');
// An operator has talked to its cluster long before it takes a backup: etcd3 has loaded and parsed
// its .proto files (a few hundred ms without a JIT) once, at its first call. So does this process,
// before the clock starts.
await readClusterHealth({ endpoints: [endpoint] });
const phases: Record<string, number> = {};
const start = process.hrtime.bigint();
const record = await takeBackup({ endpoints: [endpoint] }, fileSnapshotSink(dir), {
  name,
  onPhase: (phase, seconds) => (phases[phase] = (phases[phase] ?? 0) + seconds),
});
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
// What the sha256 check costs (the file sink's writer thread runs it during 'stream'): the same
// bytes hashed again afterwards on this thread, in 16 KiB pieces, with the same flags.
const bytes = await readFile(record.location);
const hashStart = process.hrtime.bigint();
const hash = createHash('sha256');
for (let at = 0; at < bytes.length; at += 16384) hash.update(bytes.subarray(at, at + 16384));
hash.digest();
phases['sha256 alone, on one thread (again, after)'] = Number(process.hrtime.bigint() - hashStart) / 1e9;
process.stdout.write(
  `${JSON.stringify({ seconds, bytes: record.sizeBytes, sha256: record.sha256, location: record.location, phases })}\n`,
);
