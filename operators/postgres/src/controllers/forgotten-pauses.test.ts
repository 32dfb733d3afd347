import { describe, expect, it } from 'vitest';
import { clusterView } from '../failover/cluster-view.ts';
import { down, primary, replica } from '../test-support/instance-statuses.ts';
import { pausesToResume } from './forgotten-pauses.ts';

const paused = (name: string) => replica(name, 100n, 5432, { replayPaused: true });
const view = (...replicas: ReturnType<typeof replica>[]) => clusterView([primary('pg-0', 100n), ...replicas]);

describe('pausesToResume: a replay left paused past the grace is resumed, a count under way is not', () => {
  it('times a pause from when it is first seen and names it once the grace has passed', () => {
    const since = new Map<string, number>();
    expect(pausesToResume(since, view(paused('pg-1'), replica('pg-2', 100n)), 0, 1000)).toEqual([]);
    expect(pausesToResume(since, view(paused('pg-1')), 999, 1000)).toEqual([]);
    expect(pausesToResume(since, view(paused('pg-1')), 1000, 1000)).toEqual(['pg-1']);
    // Timed again after a resume is asked: not asked again at every probe.
    expect(pausesToResume(since, view(paused('pg-1')), 1500, 1000)).toEqual([]);
  });

  it('forgets a pause that ended, so the next one is timed from its own start', () => {
    const since = new Map<string, number>();
    pausesToResume(since, view(paused('pg-1')), 0, 1000);
    pausesToResume(since, view(replica('pg-1', 100n)), 600, 1000);
    expect(pausesToResume(since, view(paused('pg-1')), 900, 1000)).toEqual([]);
    expect(pausesToResume(since, view(paused('pg-1')), 1899, 1000)).toEqual([]);
    expect(pausesToResume(since, view(paused('pg-1')), 1900, 1000)).toEqual(['pg-1']);
  });

  it('forgets an instance that cannot be reached (its pause, if any, is timed when it answers again)', () => {
    const since = new Map<string, number>();
    pausesToResume(since, clusterView([primary('pg-0', 100n), paused('pg-1')]), 0, 1000);
    pausesToResume(since, clusterView([primary('pg-0', 100n), down('pg-1')]), 500, 1000);
    expect(pausesToResume(since, clusterView([primary('pg-0', 100n), paused('pg-1')]), 1200, 1000)).toEqual(
      [],
    );
  });
});
