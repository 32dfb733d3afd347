import type { KubeObject } from '../client/resource-type.ts';

/** One change seen by an informer. `old` is set for updates. */
export interface ChangeEvent<T extends KubeObject> {
  type: 'add' | 'update' | 'delete';
  obj: T;
  old?: T;
}

/** Decides whether a change is worth a reconcile. */
export type Predicate<T extends KubeObject> = (event: ChangeEvent<T>) => boolean;

/** Passes adds, deletes and updates that changed metadata.generation (spec changes, not status). */
export const generationChanged: Predicate<KubeObject> = (e) =>
  e.type !== 'update' || e.old?.metadata?.generation !== e.obj.metadata?.generation;

/** Passes adds, deletes and updates that changed labels. */
export const labelsChanged: Predicate<KubeObject> = (e) =>
  e.type !== 'update' ||
  JSON.stringify(e.old?.metadata?.labels ?? {}) !== JSON.stringify(e.obj.metadata?.labels ?? {});

/** Passes adds, deletes and updates that changed the annotation `key` (set, changed or removed). */
export function annotationChanged(key: string): Predicate<KubeObject> {
  return (e) =>
    e.type !== 'update' || e.old?.metadata?.annotations?.[key] !== e.obj.metadata?.annotations?.[key];
}

/** Passes adds, deletes and updates that changed anything (skips periodic resyncs of the same version). */
export const resourceVersionChanged: Predicate<KubeObject> = (e) =>
  e.type !== 'update' || e.old?.metadata?.resourceVersion !== e.obj.metadata?.resourceVersion;

/** Passes a change if any of the predicates does. */
export function anyOf<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return (e) => predicates.some((p) => p(e));
}
