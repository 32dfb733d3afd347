// Instances whose postgres container keeps failing, as the kubelet reports it: the entrypoint
// writes why it stopped (a bootstrap that failed, a parameter PostgreSQL cannot take) as the
// container's termination message; a container the kubelet cannot even start (a Secret or key
// its environment names is missing, such as spec.backup's credentials; an image it cannot pull)
// waits with the kubelet's reason. Without this a first primary that never starts leaves the
// cluster Creating with no cause anywhere but the pod's description.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/** The container the entrypoint runs in (desired-pod.ts). */
const containerName = 'postgres';

// A condition message is read by people; a termination message may be up to 4096 bytes.
const maxMessageLength = 1024;

export interface InstanceFailure {
  readonly instance: string;
  /** The termination message, or the exit code and reason when the container left none. */
  readonly cause: string;
}

// Waiting reasons that mean the container will not start until something outside it changes.
// The kubelet's messages name the Secret, key or image, never a value.
const cannotStart = new Set([
  'CreateContainerConfigError',
  'CreateContainerError',
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
]);

function failure(status: V1ContainerStatus): string | undefined {
  const waiting = status.state?.waiting;
  if (waiting?.reason && cannotStart.has(waiting.reason)) {
    const detail = waiting.message?.trim();
    return `the postgres container cannot start (${waiting.reason})${detail ? `: ${detail}` : ''}`;
  }
  // Running (even not ready yet) is not a failure: a restart after a kill looks the same for a while.
  if (status.state?.running) return undefined;
  const terminated = status.state?.terminated ?? status.lastState?.terminated;
  if (!terminated || terminated.exitCode === 0) return undefined;
  const message = terminated.message?.trim();
  if (message) return message;
  return `the postgres container exited with code ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ''}`;
}

/** The instances whose postgres container is down after failing, each with the cause. */
export function instanceFailures(pods: ReadonlyMap<string, V1Pod>): InstanceFailure[] {
  const failures: InstanceFailure[] = [];
  for (const [instance, pod] of [...pods].sort(([a], [b]) => a.localeCompare(b))) {
    const status = pod.status?.containerStatuses?.find((c) => c.name === containerName);
    const cause = status && failure(status);
    if (cause) failures.push({ instance, cause: cause.slice(0, maxMessageLength) });
  }
  return failures;
}

/** One line for a condition and an Event: each failing instance and its cause. */
export function describeFailures(failures: readonly InstanceFailure[]): string {
  return failures.map((f) => `${f.instance}: ${f.cause}`).join('; ');
}
