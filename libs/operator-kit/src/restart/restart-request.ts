// The one way a user asks any Homeostat operator for a rolling restart: an annotation on the custom
// resource (`kubectl homeostat restart` sets it to the time). Its value is opaque: the operators only
// carry it onto the pods, so any change of it, and only a change, restarts every pod once.
import type { KubeObject } from '@homeostat/reconcile';

/** The custom resource's annotation that asks for a rolling restart (RFC 3339 time by convention). */
export const restartedAtAnnotation = 'homeostat.dev/restartedAt';

/** The restart request `object` carries, or undefined when it carries none (nothing to restart for). */
export function restartRequest(object: KubeObject | undefined): string | undefined {
  const value = object?.metadata?.annotations?.[restartedAtAnnotation];
  // An empty value is no request: a pod without the annotation and one with "" would otherwise differ.
  return value ? value : undefined;
}

/** The annotations that carry `object`'s restart request onto a pod: empty when it has none. */
export function restartAnnotations(object: KubeObject | undefined): Record<string, string> {
  const value = restartRequest(object);
  return value === undefined ? {} : { [restartedAtAnnotation]: value };
}
