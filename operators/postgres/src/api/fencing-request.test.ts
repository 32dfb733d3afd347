import { describe, expect, it } from 'vitest';
import { fencedInstancesAnnotation, parseFencingRequest } from './fencing-request.ts';

describe('the fencedInstances annotation', () => {
  it('fences nothing when absent or empty', () => {
    expect(parseFencingRequest(undefined)).toEqual({ valid: true, instances: [] });
    expect(parseFencingRequest('')).toEqual({ valid: true, instances: [] });
    expect(parseFencingRequest('[]')).toEqual({ valid: true, instances: [] });
  });

  it('reads a list of names, sorted and once each, or "*" for every instance', () => {
    expect(parseFencingRequest('["db-2","db-0","db-2"]')).toEqual({
      valid: true,
      instances: ['db-0', 'db-2'],
    });
    expect(parseFencingRequest('["*"]')).toEqual({ valid: true, instances: 'all' });
  });

  it('refuses anything else, quoting the value', () => {
    for (const value of ['db-1', '{"db-1":true}', '[1]', '[""]', '"db-1"', '[']) {
      const read = parseFencingRequest(value);
      expect(read.valid).toBe(false);
      if (!read.valid) {
        expect(read.problem).toContain(fencedInstancesAnnotation);
        expect(read.problem).toContain(JSON.stringify(value));
      }
    }
    const mixed = parseFencingRequest('["*","db-1"]');
    expect(mixed.valid ? '' : mixed.problem).toContain('"*" stands alone');
  });
});
