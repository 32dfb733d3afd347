import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';

const run = promisify(execFile);

/** Paths of the certificates and keys a control plane needs, all PEM. */
export interface ControlPlanePki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

/** A PEM certificate and its key, as file paths. */
export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

/** What a test certificate is for. */
export interface TestCertificateRequest {
  /** Distinguished name, e.g. `/CN=etcd-client` or `/O=system:masters/CN=admin`. */
  readonly subject: string;
  /** subjectAltName entries, e.g. `IP:127.0.0.1`, `DNS:localhost`. */
  readonly sans?: readonly string[];
  readonly usages: readonly ('serverAuth' | 'clientAuth')[];
  /** Says what is being made, in openssl's error message. */
  readonly describe: string;
}

async function openssl(args: string[], context: string): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl failed while creating ${context}: ${stderr.trim() || String(error)}`, {
      cause: error,
    });
  }
}

const validDays = '30';
// EC P-256 keys keep this to a few milliseconds per certificate.
const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-noenc'];

/** A throwaway self-signed CA, written to `<dir>/<name>.crt` and `<dir>/<name>.key`. */
export async function createTestCa(dir: string, name: string, commonName: string): Promise<TestCertificate> {
  const ca = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  await openssl(
    [
      'req',
      '-x509',
      ...ecKey,
      '-keyout',
      ca.key,
      '-out',
      ca.cert,
      '-days',
      validDays,
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    `the test CA ${commonName}`,
  );
  return ca;
}

/** A leaf certificate signed by `ca`, written to `<dir>/<name>.crt` and `<dir>/<name>.key`. */
export async function issueTestCertificate(
  ca: TestCertificate,
  dir: string,
  name: string,
  request: TestCertificateRequest,
): Promise<TestCertificate> {
  const leaf = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const sans = request.sans ?? [];
  await openssl(
    [
      'req',
      '-x509',
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-days',
      validDays,
      ...ecKey,
      '-keyout',
      leaf.key,
      '-out',
      leaf.cert,
      '-subj',
      request.subject,
      ...(sans.length > 0 ? ['-addext', `subjectAltName=${sans.join(',')}`] : []),
      '-addext',
      `extendedKeyUsage=${request.usages.join(',')}`,
      '-addext',
      'basicConstraints=critical,CA:FALSE',
    ],
    request.describe,
  );
  return leaf;
}

/**
 * Makes a throwaway CA, an API server serving certificate for loopback, an admin client
 * certificate in `system:masters`, and a service-account signing key pair, in `dir`.
 */
export async function createControlPlanePki(
  dir: string,
  serviceIp: string,
  /** More subjectAltName entries for the serving certificate, e.g. `IP:10.244.0.1` for a node bridge. */
  extraSans: readonly string[] = [],
): Promise<ControlPlanePki> {
  const p = (name: string) => join(dir, name);
  const serviceAccountKey = p('sa.key');
  const serviceAccountPub = p('sa.pub');
  const ca = await createTestCa(dir, 'ca', 'homeostat-test-ca');
  const [serving, admin] = await Promise.all([
    issueTestCertificate(ca, dir, 'apiserver', {
      subject: '/CN=kube-apiserver',
      sans: [
        'IP:127.0.0.1',
        `IP:${serviceIp}`,
        'DNS:localhost',
        'DNS:kubernetes',
        'DNS:kubernetes.default',
        'DNS:kubernetes.default.svc',
        'DNS:kubernetes.default.svc.cluster.local',
        ...extraSans,
      ],
      usages: ['serverAuth'],
      describe: 'the API server serving certificate',
    }),
    issueTestCertificate(ca, dir, 'admin', {
      subject: '/O=system:masters/CN=homeostat-admin',
      usages: ['clientAuth'],
      describe: 'the admin client certificate',
    }),
    openssl(
      ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', serviceAccountKey],
      'the service-account signing key',
    ),
  ]);
  await openssl(
    ['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub],
    'the service-account public key',
  );
  return {
    caCert: ca.cert,
    caKey: ca.key,
    servingCert: serving.cert,
    servingKey: serving.key,
    adminCert: admin.cert,
    adminKey: admin.key,
    serviceAccountKey,
    serviceAccountPub,
  };
}

/** Reads a PEM file as base64, the form kubeconfig `*-data` fields take. */
export async function pemAsBase64(path: string): Promise<string> {
  return Buffer.from(await readFile(path)).toString('base64');
}
