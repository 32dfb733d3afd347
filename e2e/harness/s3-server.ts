// A real S3-compatible server inside the cluster under test, for suites that back up to a bucket:
// versitygw (the image built offline from its Go module, e2e/images/versitygw) with its posix
// backend on an emptyDir, in a namespace of its own with a Service, its root credentials in a
// Secret there. Suites get a credentials Secret in their own namespace, can list the objects under
// a prefix, and can change an object's bytes in place or delete it (to see a corrupted or
// incomplete backup refused). Those three work on the server's files (the posix backend keeps each
// object as a file under <bucket>/<key>): the harness has no S3 client, and a damaged object must
// look to the server as it would after a fault on its own disk.
//
// With `tls`, it serves https only, with a certificate for the Service's DNS names from a CA made
// here for this server alone (pgBackRest speaks S3 over https and nothing else); suites put that
// CA into a Secret of their own namespace, as a user with a private CA would.
import { randomBytes } from 'node:crypto';
import { createCertificateAuthority, issueCertificate } from '@homeostat/operator-kit/tls';
import { suiteImages } from '../images/image-names.ts';
import { apply, kubectl } from './cluster-access.ts';
import { createTestNamespace } from './test-namespace.ts';
import { restrictedSecurityContext, servedDeployment, waitForDeployment } from './workloads.ts';

const port = 7070;
const dataDir = '/data';
const tlsDir = '/etc/s3-tls';
const uid = 65532;
/** Long enough for any run; the CA lives only as long as the server's namespace. */
const validDays = 7;

export interface ClusterS3Server {
  /** The server's own namespace. */
  readonly namespace: string;
  /**
   * http://s3.<namespace>.svc:7070, or https:// with `tls`: buckets are addressed path-style
   * (`forcePathStyle`).
   */
  readonly endpoint: string;
  readonly region: string;
  /** A Secret `name` in `namespace` with accessKeyId and secretAccessKey, as backup destinations read it. */
  credentialsSecret(namespace: string, name: string): Promise<void>;
  /**
   * With `tls`: a Secret `name` in `namespace` whose key `ca.crt` is the CA (PEM) the server's
   * certificate chains to. Without `tls` it throws: there is no CA.
   */
  caSecret(namespace: string, name: string): Promise<void>;
  /** The sha256 (hex) of an object's bytes without the last `trimBytes` (etcd's trailer: 32). */
  objectSha256(bucket: string, key: string, trimBytes?: number): Promise<string>;
  /** Inverts every bit of the object's byte at its middle; returns that offset. */
  flipByte(bucket: string, key: string): Promise<number>;
  /** The keys of every object in `bucket` whose key starts with `prefix`, sorted. */
  objectKeys(bucket: string, prefix: string): Promise<string[]>;
  /** Deletes one object; fails if it does not exist. */
  deleteObject(bucket: string, key: string): Promise<void>;
  /** Deletes the server's namespace. */
  remove(): Promise<void>;
}

export interface S3ServerOptions {
  /** Serve https only, with a certificate for the Service's DNS names from a CA of its own. */
  readonly tls?: boolean;
  /** Where its pod may run (a pod spec's nodeSelector and tolerations): off the nodes a run stops. */
  readonly placement?: { nodeSelector: Record<string, string>; tolerations: object[] };
}

/** Deploys the server with `buckets` made empty, and waits until it serves. */
export async function deployS3Server(
  buckets: readonly string[],
  options: S3ServerOptions = {},
): Promise<ClusterS3Server> {
  const space = await createTestNamespace('e2e-s3');
  const namespace = space.name;
  const serviceHost = `s3.${namespace}.svc`;
  // The names a client in the cluster may use; pgBackRest checks the endpoint's host against them.
  const tls = options.tls
    ? await (async () => {
        const ca = await createCertificateAuthority(`e2e-s3-ca-${namespace}`, validDays);
        const server = await issueCertificate(ca, {
          commonName: serviceHost,
          dnsNames: ['s3', `s3.${namespace}`, serviceHost, `${serviceHost}.cluster.local`],
          usages: ['server'],
          validDays,
        });
        return { ca: ca.certificate, server };
      })()
    : undefined;
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
      ...(tls
        ? [
            {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 's3-tls', namespace },
              type: 'kubernetes.io/tls',
              stringData: { 'tls.crt': tls.server.certificate, 'tls.key': tls.server.privateKey },
            },
          ]
        : []),
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
            `mkdir -p ${buckets.map((b) => `${dataDir}/${b}`).join(' ')} && exec /app/versitygw --port :${port} --region ${region}${tls ? ` --cert ${tlsDir}/tls.crt --key ${tlsDir}/tls.key` : ''} posix ${dataDir}`,
          ],
          env: [
            secretEnv('ROOT_ACCESS_KEY_ID', 'accessKeyId'),
            secretEnv('ROOT_SECRET_ACCESS_KEY', 'secretAccessKey'),
          ],
          ports: [{ name: 's3', containerPort: port }],
          readinessProbe: { tcpSocket: { port }, periodSeconds: 2 },
          securityContext: restrictedSecurityContext(uid),
          resources: { requests: { cpu: '20m', memory: '32Mi' } },
          volumeMounts: [
            { name: 'data', mountPath: dataDir },
            ...(tls ? [{ name: 'tls', mountPath: tlsDir, readOnly: true }] : []),
          ],
        },
        podSpec: {
          ...options.placement,
          securityContext: { fsGroup: uid },
          volumes: [
            { name: 'data', emptyDir: {} },
            // Group-readable: the files are root's, the server runs as fsGroup's member.
            ...(tls ? [{ name: 'tls', secret: { secretName: 's3-tls', defaultMode: 0o440 } }] : []),
          ],
        },
        ports: [{ name: 's3', port, targetPort: port }],
      }),
    ]);
    await waitForDeployment(namespace, 's3');
  } catch (error) {
    await space.remove();
    throw error;
  }

  // A shell in the server's pod with `args` as $1... (paths and keys never go through the shell).
  const inServer = (script: string, ...args: string[]) =>
    kubectl(['-n', namespace, 'exec', 'deploy/s3', '--', 'bash', '-c', script, 's3-server', ...args]);
  // The same with the object's path as $1.
  const inObject = (bucket: string, key: string, script: string, ...args: string[]) =>
    inServer(script, `${dataDir}/${bucket}/${key}`, ...args);

  return {
    namespace,
    endpoint: `${tls ? 'https' : 'http'}://${serviceHost}:${port}`,
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
    caSecret: async (target, name) => {
      if (!tls) throw new Error('this S3 server serves plain http: deploy it with { tls: true } for a CA');
      await apply([
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: target },
          stringData: { 'ca.crt': tls.ca },
        },
      ]);
    },
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
    objectKeys: async (bucket, prefix) => {
      // The listing starts at the prefix's directory, so a prefix that ends inside a file name
      // (`archive/000000010000000000000004-`) works as an S3 listing's does. versitygw keeps
      // multipart uploads in progress under .sgwtmp: they are not objects yet.
      const out = await inServer(
        'cd "$1" && dir="$(dirname "$2")"; [[ -d "$dir" ]] || exit 0; find "$dir" -path ./.sgwtmp -prune -o -type f -print',
        `${dataDir}/${bucket}`,
        `./${prefix}`,
      );
      return out
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => line.replace(/^\.\//, ''))
        .filter((key) => key.startsWith(prefix))
        .sort();
    },
    deleteObject: async (bucket, key) => {
      await inObject(bucket, key, 'rm -- "$1"');
    },
    remove: () => space.remove(),
  };
}
