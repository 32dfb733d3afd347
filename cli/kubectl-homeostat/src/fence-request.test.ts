import { describe, expect, it } from 'vitest';
import {
  fenceChange,
  fencedInstancesAnnotation,
  fencedPodAnnotation,
  fencePatch,
  parseFencedInstances,
  type FenceRequest,
} from './fence-request.ts';
import { UsageError } from './kinds.ts';
import { fencedInstancesAnnotation as operatorKey } from '../../../operators/postgres/src/api/fencing-request.ts';
import { annotationKeys as operatorPodKeys } from '../../../operators/postgres/src/controllers/operand-labels.ts';

const instances = ['accounts-0', 'accounts-1', 'accounts-2'];
const fence = (...names: string[]): FenceRequest => ({ action: 'fence', instances: names });
const unfence = (...names: string[]): FenceRequest => ({ action: 'unfence', instances: names });
const change = (current: string | undefined, request: FenceRequest) =>
  fenceChange('accounts', current, request, instances);

describe('the annotations, as the PostgreSQL operator reads and writes them', () => {
  it("are the operator's own keys (the plugin, bundled alone, keeps copies)", () => {
    expect(fencedInstancesAnnotation).toBe(operatorKey);
    expect(fencedPodAnnotation).toBe(operatorPodKeys.fenced);
  });
});

describe('parseFencedInstances (the annotation as the operator reads it)', () => {
  it('reads absent and [] as nothing fenced, names sorted once, and any "*" as every instance', () => {
    expect(parseFencedInstances(undefined)).toEqual([]);
    expect(parseFencedInstances('[]')).toEqual([]);
    expect(parseFencedInstances('["accounts-10","accounts-2","accounts-2"]')).toEqual([
      'accounts-2',
      'accounts-10',
    ]);
    expect(parseFencedInstances('["accounts-1","*"]')).toBe('*');
  });

  it('refuses anything else, naming the annotation and its value', () => {
    for (const value of ['', 'accounts-1', '"accounts-1"', '{"a":1}', '[1]', '[""]', '["a",null]']) {
      expect(() => parseFencedInstances(value), value).toThrow(
        `the annotation ${fencedInstancesAnnotation} is ${JSON.stringify(value)}, not a JSON array of instance names`,
      );
    }
  });
});

describe('fenceChange (the annotation after fence or unfence)', () => {
  it('adds names to those fenced, sorted and each once', () => {
    expect(change(undefined, fence('accounts-1'))).toEqual({
      value: '["accounts-1"]',
      changed: true,
      spelledOut: false,
    });
    expect(change('["accounts-2"]', fence('accounts-1', 'accounts-2', 'accounts-1')).value).toBe(
      '["accounts-1","accounts-2"]',
    );
  });

  it('fences every instance with --all, and keeps "*" when names are added to it', () => {
    expect(change('["accounts-1"]', { action: 'fence', instances: 'all' }).value).toBe('["*"]');
    expect(change('["*"]', fence('accounts-1'))).toEqual({
      value: '["*"]',
      changed: false,
      spelledOut: false,
    });
  });

  it('writes nothing when the request changes nothing, whatever order the value is in', () => {
    expect(change('["accounts-2","accounts-1"]', fence('accounts-1')).changed).toBe(false);
    expect(change(undefined, unfence('accounts-1')).changed).toBe(false);
    expect(change('[]', { action: 'unfence', instances: 'all' }).changed).toBe(false);
  });

  it('removes names, and the annotation with the last one or with --all', () => {
    expect(change('["accounts-1","accounts-2"]', unfence('accounts-2')).value).toBe('["accounts-1"]');
    expect(change('["accounts-1"]', unfence('accounts-1'))).toEqual({
      value: null,
      changed: true,
      spelledOut: false,
    });
    expect(change('["*"]', { action: 'unfence', instances: 'all' })).toEqual({
      value: null,
      changed: true,
      spelledOut: false,
    });
  });

  it('unfences one instance of "*" by naming every other instance, which stay fenced', () => {
    expect(change('["*"]', unfence('accounts-1'))).toEqual({
      value: '["accounts-0","accounts-2"]',
      changed: true,
      spelledOut: true,
    });
  });

  it('refuses names that are not instances of the cluster, listing those that are', () => {
    const refused = () => change(undefined, fence('accounts-1', 'orders-0', 'accounts-3'));
    expect(refused).toThrow(UsageError);
    expect(refused).toThrow(
      'orders-0, accounts-3: not an instance of accounts (its instances: accounts-0, accounts-1, accounts-2; every instance: --all)',
    );
    expect(() => change('["*"]', unfence('*'))).toThrow('*: not an instance of accounts');
  });

  it('refuses to change an annotation it cannot read, rather than overwrite it', () => {
    expect(() => change('accounts-1', fence('accounts-2'))).toThrow(
      `the annotation ${fencedInstancesAnnotation} is "accounts-1"`,
    );
    expect(() => change('accounts-1', { action: 'unfence', instances: 'all' })).toThrow(
      fencedInstancesAnnotation,
    );
  });
});

describe('fencePatch', () => {
  it('sets only the annotation, or removes it with null', () => {
    expect(fencePatch('["accounts-1"]')).toEqual({
      metadata: { annotations: { 'postgres.homeostat.dev/fencedInstances': '["accounts-1"]' } },
    });
    expect(fencePatch(null)).toEqual({
      metadata: { annotations: { 'postgres.homeostat.dev/fencedInstances': null } },
    });
  });
});
