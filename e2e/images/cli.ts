// `npm run images`: builds every image in images.json (but the monitoring addon's) offline (skipping unchanged ones) and,
// when the local cluster is up, imports them into its containerd.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { paths, stateDir } from '../cluster/layout.ts';
import { note, step } from '../cluster/progress.ts';
import { ensureImages } from './build-images.ts';
import { imageRecipes } from './image-recipes.ts';
import { monitoringImages } from './image-names.ts';

// By default every image but the monitoring addon's, which only its suite needs (ADR 0016).
const named = process.argv.slice(2);
const addon = new Set<string>(Object.values(monitoringImages));
const refs = named.length ? named : imageRecipes.map((r) => r.ref).filter((ref) => !addon.has(ref));
const clusterUp = existsSync(paths.ready);
await step(`images: build${clusterUp ? ' and import into the local cluster' : ''}`, () =>
  ensureImages({
    refs,
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
