import { describe, expect, it } from 'vitest';
import { restartAnnotations, restartedAtAnnotation, restartRequest } from './restart-request.ts';

const withAnnotations = (annotations?: Record<string, string>) => ({
  metadata: { name: 'c', ...(annotations ? { annotations } : {}) },
});

describe('restartRequest (the rolling restart a custom resource asks for)', () => {
  it('is the annotation as written', () => {
    const value = '2026-11-28T01:30:00Z';
    expect(restartRequest(withAnnotations({ [restartedAtAnnotation]: value }))).toBe(value);
    expect(restartAnnotations(withAnnotations({ [restartedAtAnnotation]: value }))).toEqual({
      'homeostat.dev/restartedAt': value,
    });
  });

  it('is none without the annotation, with it empty, or without the object', () => {
    for (const object of [
      withAnnotations(),
      withAnnotations({ other: 'x' }),
      withAnnotations({ [restartedAtAnnotation]: '' }),
      undefined,
    ]) {
      expect(restartRequest(object)).toBeUndefined();
      expect(restartAnnotations(object)).toEqual({});
    }
  });
});
