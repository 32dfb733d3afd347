// Finding the resource a command names, among the Homeostat kinds it may be.
import { homeostatKinds, parseTarget, UsageError, type HomeostatKind } from './kinds.ts';
import { getJson, KubectlError, type KubectlTarget } from './kubectl.ts';
import type { Resource } from './status-view.ts';

export interface Found<T extends Resource = Resource> {
  kind: HomeostatKind;
  resource: T;
}

const notServed = /doesn't have a resource type|the server could not find the requested resource/;

/** The resource `target` (`TYPE/NAME` or `NAME`) names, among `allowed` kinds; throws saying where it looked. */
export async function findResource<T extends Resource = Resource>(
  kubectl: KubectlTarget,
  target: string,
  allowed: readonly HomeostatKind[] = homeostatKinds,
): Promise<Found<T>> {
  const { kinds, name } = parseTarget(target);
  const candidates = kinds.filter((k) => allowed.includes(k));
  if (candidates.length === 0) {
    const names = allowed.map((k) => k.kind).join(' or ');
    throw new UsageError(`${target}: this command takes a ${names}`);
  }
  for (const kind of candidates) {
    try {
      const resource = await getJson<T>(kubectl, [kind.resource, name]);
      if (resource) return { kind, resource };
    } catch (error) {
      // A kind whose operator (and CRD) is not installed here: look at the others.
      if (!(error instanceof KubectlError && notServed.test(error.stderr))) throw error;
    }
  }
  const where = kubectl.namespace ? `namespace ${kubectl.namespace}` : "the context's namespace";
  throw new UsageError(`no ${candidates.map((k) => k.kind).join(' or ')} named ${name} in ${where}`);
}

/** Every Homeostat resource in the namespace, kind by kind (kinds not installed are skipped). */
export async function listResources(kubectl: KubectlTarget): Promise<Resource[]> {
  const all: Resource[] = [];
  for (const kind of homeostatKinds) {
    try {
      const list = await getJson<{ items: Resource[] }>(kubectl, [kind.resource]);
      all.push(...(list?.items ?? []).map((item) => ({ ...item, kind: item.kind ?? kind.kind })));
    } catch (error) {
      if (!(error instanceof KubectlError && notServed.test(error.stderr))) throw error;
    }
  }
  return all;
}
