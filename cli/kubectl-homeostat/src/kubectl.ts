// Every cluster call goes through the user's kubectl, with the flags the user gave the plugin
// (kubectl passes them on untouched): same kubeconfig, context and credentials as kubectl itself.
import { spawn } from 'node:child_process';

/** kubectl's flags the plugin passes on, and the namespace they name. */
export interface KubectlTarget {
  /** --context, --kubeconfig, --namespace as given. */
  flags: readonly string[];
  /** The namespace given, or undefined for kubectl's (the context's, else default). */
  namespace: string | undefined;
}

/** The kubectl to run: $KUBECTL, else kubectl on PATH. */
export function kubectlBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env['KUBECTL'] || 'kubectl';
}

export class KubectlError extends Error {
  readonly args: readonly string[];
  readonly code: number | null;
  readonly stderr: string;

  constructor(args: readonly string[], code: number | null, stderr: string) {
    super(`kubectl ${args.join(' ')}: ${stderr.trim() || `exit code ${code}`}`);
    this.args = args;
    this.code = code;
    this.stderr = stderr;
  }
}

/** Runs kubectl with `args` after the target's flags; resolves with stdout, rejects with stderr. */
export function kubectl(target: KubectlTarget, args: readonly string[], input?: string): Promise<string> {
  const all = [...target.flags, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBinary(), all, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (error) => reject(new KubectlError(all, null, error.message)));
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new KubectlError(all, code, stderr))));
    child.stdin.end(input ?? '');
  });
}

/** Runs kubectl attached to this terminal (an interactive session); resolves with its exit code. */
export function kubectlAttached(target: KubectlTarget, args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBinary(), [...target.flags, ...args], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** `kubectl get … -o json`, parsed; undefined when not found. */
export async function getJson<T>(target: KubectlTarget, args: readonly string[]): Promise<T | undefined> {
  try {
    return JSON.parse(await kubectl(target, ['get', ...args, '-o', 'json'])) as T;
  } catch (error) {
    if (error instanceof KubectlError && /NotFound|not found/.test(error.stderr)) return undefined;
    throw error;
  }
}

/** `kubectl patch --type=merge`: changes only the fields `patch` names. */
export async function mergePatch(
  target: KubectlTarget,
  resource: string,
  name: string,
  patch: object,
): Promise<void> {
  await kubectl(target, ['patch', resource, name, '--type=merge', '-p', JSON.stringify(patch)]);
}

/** Whether kubectl failed because the object changed since it was read (the API server's 409 Conflict). */
export function isConflict(error: unknown): boolean {
  return error instanceof KubectlError && /\(Conflict\)|the object has been modified/.test(error.stderr);
}

/** Runs `attempt` again while it fails on a conflict, at most `attempts` times in all. */
export async function retryOnConflict<T>(attempts: number, attempt: () => Promise<T>): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error)) throw error;
      if (tried >= attempts)
        throw new Error(`the object kept changing while it was written (${attempts} conflicts in a row)`, {
          cause: error,
        });
    }
  }
}

/** A JSON merge patch (RFC 7386): the fields it names are set, a null removes one. */
export interface MergePatch {
  metadata?: Record<string, unknown>;
  [field: string]: unknown;
}

interface Versioned {
  metadata?: { resourceVersion?: string };
}

/**
 * Read-modify-write with optimistic concurrency: `change` computes a merge patch from the object as
 * read (or undefined: nothing to write), and the patch carries that object's resourceVersion, so a
 * write by anyone else in between makes the API server refuse it (409) instead of this write
 * silently undoing theirs; then the object is read again and `change` computes anew.
 * Resolves with the object the patch was computed from, and the patch written (if any).
 */
export async function patchAsRead<T extends Versioned>(
  target: KubectlTarget,
  resource: string,
  name: string,
  change: (current: T) => MergePatch | undefined,
  attempts = 5,
): Promise<{ read: T; written: MergePatch | undefined }> {
  return retryOnConflict(attempts, async () => {
    const read = await getJson<T>(target, [resource, name]);
    if (!read) throw new Error(`${resource} ${name}: not found`);
    const resourceVersion = read.metadata?.resourceVersion;
    if (!resourceVersion) throw new Error(`${resource} ${name}: read without a resourceVersion`);
    const patch = change(read);
    if (patch === undefined) return { read, written: undefined };
    const written = versionedPatch(resourceVersion, patch);
    await mergePatch(target, resource, name, written);
    return { read, written };
  });
}

/** `patch` with `metadata.resourceVersion` set: the API server applies it only to that version. */
export function versionedPatch(resourceVersion: string, patch: MergePatch): MergePatch {
  return { ...patch, metadata: { ...patch.metadata, resourceVersion } };
}
