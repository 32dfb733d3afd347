// The physical replication slots the operator makes on the primary, one per other instance.
import type { SlotStatus } from './observe.ts';

const prefix = 'homeostat_';

/** The replication slot an instance streams through (the entrypoint uses the same rule). */
export function slotName(instance: string): string {
  return `${prefix}${instance.replaceAll('-', '_')}`;
}

/**
 * The operator's slots on the primary that no instance streams through any more (scaling removed
 * it): each keeps WAL from being recycled, so it is dropped. A slot in use is left alone.
 */
export function straySlots(slots: readonly SlotStatus[], instances: readonly string[]): string[] {
  const wanted = new Set(instances.map(slotName));
  return slots
    .filter((s) => s.name.startsWith(prefix) && !wanted.has(s.name) && !s.active)
    .map((s) => s.name)
    .sort();
}
