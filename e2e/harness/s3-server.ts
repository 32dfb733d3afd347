// A real S3-compatible server inside the cluster under test, for suites that back up to a bucket:
// versitygw (the image built offline from its Go module, e2e/images/versitygw) with its posix
// backend on an emptyDir, in a namespace of its own with a Service, its root credentials in a
// Secret there. Suites get a credentials Secret in their own namespace and can change an object's
// bytes in place (to see a corrupted backup refused).
import { randomBytes } from 'node:crypto';
import { suiteImages } from '../images/image-names.ts';
import { apply, kubectl } from './cluster-access.ts';
import { createTestNamespace } from './test-namespace.ts';
import { restrictedSecurityContext, servedDeployment, waitForDeployment } from './workloads.ts';

const port = 7070;
const dataDir = '/data';
const uid = 65532;

export interface ClusterS3Server {
  /** The server's own namespace. */
  readonly namespace: string;
  /** http://s3.<namespace>.svc:7070: buckets are addressed path-style (`forcePathStyle`). */
  readonly endpoint: string;
  readonly region: string;
  /** A Secret `name` in `namespace` with accessKeyId and secretAccessKey, as backup destinations read it. */
  credentialsSecret(namespace: string, name: string): Promise<void>;
  /** The sha256 (hex) of an object's bytes without the last `trimBytes` (etcd's trailer: 32). */
  objectSha256(bucket: string, key: string, trimBytes?: number): Promise<string>;
  /** Inverts every bit of the object's byte at its middle; returns that offset. */
  flipByte(bucket: string, key: string): Promise<number>;
  /** Deletes the server's namespace. */
  remove(): Promise<void>;
}

/** Deploys the server with `buckets` made empty, and waits until it serves. */
export async function deployS3Server(buckets: readonly string[]): Promise<ClusterS3Server> {
  const space = await createTestNamespace('e2e-s3');
  const namespace = space.name;
  const accessKeyId = `e2e${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(20).toString('hex');
  const region = 'us-east-1';
  const labels = { 'app.kubernetes.io/name': 's3' };
  const secretEnv = (name: string, key: string) => ({
    name,
    valueFrom: { secretKeyRef: { name: 's3-root', key } },
  });
  try {
    await apply([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's3-root', namespace },
        stringData: { accessKeyId, secretAccessKey },
      },
      ...servedDeployment({
        name: 's3',
        namespace,
        labels,
        container: {
          name: 'versitygw',
          image: suiteImages.s3,
          // The posix backend sees each directory under its root as a bucket.
          command: [
            'sh',
            '-c',
            `mkdir -p ${buckets.map((b) => `${dataDir}/${b}`).join(' ')} && exec /app/versitygw --port :${port} --region ${region} posix ${dataDir}`,
          ],
          env: [
            secretEnv('ROOT_ACCESS_KEY_ID', 'accessKeyId'),
            secretEnv('ROOT_SECRET_ACCESS_KEY', 'secretAccessKey'),
          ],
          ports: [{ name: 's3', containerPort: port }],
          readinessProbe: { tcpSocket: { port }, periodSeconds: 2 },
          securityContext: restrictedSecurityContext(uid),
          resources: { requests: { cpu: '20m', memory: '32Mi' } },
          volumeMounts: [{ name: 'data', mountPath: dataDir }],
        },
        podSpec: { securityContext: { fsGroup: uid }, volumes: [{ name: 'data', emptyDir: {} }] },
        ports: [{ name: 's3', port, targetPort: port }],
      }),
    ]);
    await waitForDeployment(namespace, 's3');
  } catch (error) {
    await space.remove();
    throw error;
  }

  // A shell in the server's pod, with the object's path as $1 (the key never goes through the shell).
  const inObject = (bucket: string, key: string, script: string, ...args: string[]) =>
    kubectl([
      '-n',
      namespace,
      'exec',
      'deploy/s3',
      '--',
      'bash',
      '-c',
      script,
      'object',
      `${dataDir}/${bucket}/${key}`,
      ...args,
    ]);

  return {
    namespace,
    endpoint: `http://s3.${namespace}.svc:${port}`,
    region,
    credentialsSecret: (target, name) =>
      apply([
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: target },
          stringData: { accessKeyId, secretAccessKey },
        },
      ]),
    objectSha256: async (bucket, key, trimBytes = 0) =>
      (await inObject(bucket, key, 'head -c -"$2" "$1" | sha256sum', String(trimBytes))).split(' ')[0] ?? '',
    flipByte: async (bucket, key) => {
      const offset = Number(
        (
          await inObject(
            bucket,
            key,
            [
              'set -e',
              'offset=$(( $(stat -c %s "$1") / 2 ))',
              'byte=$(od -An -tu1 -j "$offset" -N1 "$1" | tr -d " ")',
              // The inverted byte, written in place (the object keeps its file and metadata).
              'printf "$(printf "\\\\%03o" $(( byte ^ 255 )))" | dd of="$1" bs=1 seek="$offset" count=1 conv=notrunc status=none',
              'echo "$offset"',
            ].join('\n'),
          )
        ).trim(),
      );
      return offset;
    },
    remove: () => space.remove(),
  };
}
