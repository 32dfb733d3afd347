import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/resource-type.ts';
import { annotationChanged, anyOf, generationChanged, type ChangeEvent } from './predicates.ts';

const key = 'homeostat.dev/restartedAt';
const object = (generation: number, annotations?: Record<string, string>): KubeObject => ({
  metadata: { name: 'c', generation, ...(annotations ? { annotations } : {}) },
});
const update = (old: KubeObject, obj: KubeObject): ChangeEvent<KubeObject> => ({ type: 'update', old, obj });

describe('annotationChanged', () => {
  const changed = annotationChanged(key);

  it('passes an update that sets, changes or removes the annotation', () => {
    expect(changed(update(object(1), object(1, { [key]: 'a' })))).toBe(true);
    expect(changed(update(object(1, { [key]: 'a' }), object(1, { [key]: 'b' })))).toBe(true);
    expect(changed(update(object(1, { [key]: 'a' }), object(1)))).toBe(true);
  });

  it('drops an update that leaves it as it was, whatever else changed', () => {
    expect(changed(update(object(1, { [key]: 'a' }), object(2, { [key]: 'a', other: 'x' })))).toBe(false);
    expect(changed(update(object(1), object(1, { other: 'x' })))).toBe(false);
  });

  it('passes adds and deletes', () => {
    expect(changed({ type: 'add', obj: object(1) })).toBe(true);
    expect(changed({ type: 'delete', obj: object(1) })).toBe(true);
  });

  it('with generationChanged, wakes a controller for a spec change or a restart request, not for status', () => {
    const either = anyOf(generationChanged, changed);
    expect(either(update(object(1), object(2)))).toBe(true);
    expect(either(update(object(1), object(1, { [key]: 'a' })))).toBe(true);
    expect(either(update(object(1, { [key]: 'a' }), object(1, { [key]: 'a' })))).toBe(false);
  });
});
