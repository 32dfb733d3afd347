// `npm run images`: builds every image in images.json offline (skipping unchanged ones) and,
// when the local cluster is up, imports them into its containerd.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { paths, stateDir } from '../cluster/layout.ts';
import { note, step } from '../cluster/progress.ts';
import { ensureImages } from './build-images.ts';

const refs = process.argv.slice(2);
const clusterUp = existsSync(paths.ready);
await step(`images: build${clusterUp ? ' and import into the local cluster' : ''}`, () =>
  ensureImages({
    ...(refs.length ? { refs } : {}),
    ...(clusterUp
      ? {
          containerd: {
            socket: paths.containerdSocket,
            importedRecord: join(stateDir, 'imported-images.json'),
          },
        }
      : {}),
    log: note,
  }),
);
if (!clusterUp)
  note('the local cluster is not up: images built but not imported (`npm run cluster:up` imports them)');
