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
const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-noenc'];

/**
 * Makes a throwaway CA, an API server serving certificate for loopback, an admin client
 * certificate in `system:masters`, and a service-account signing key pair, in `dir`.
 * EC P-256 keys keep this to a few milliseconds per certificate.
 */
export async function createControlPlanePki(
  dir: string,
  serviceIp: string,
  /** More subjectAltName entries for the serving certificate, e.g. `IP:10.244.0.1` for a node bridge. */
  extraSans: readonly string[] = [],
): Promise<ControlPlanePki> {
  const p = (name: string) => join(dir, name);
  const pki: ControlPlanePki = {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    serviceAccountKey: p('sa.key'),
    serviceAccountPub: p('sa.pub'),
  };
  await openssl(
    [
      'req',
      '-x509',
      ...ecKey,
      '-keyout',
      pki.caKey,
      '-out',
      pki.caCert,
      '-days',
      validDays,
      '-subj',
      '/CN=homeostat-test-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    'the test CA',
  );
  const signedByCa = ['-x509', '-CA', pki.caCert, '-CAkey', pki.caKey, '-days', validDays];
  const sans = [
    'IP:127.0.0.1',
    `IP:${serviceIp}`,
    'DNS:localhost',
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
    ...extraSans,
  ].join(',');
  await Promise.all([
    openssl(
      [
        'req',
        ...signedByCa,
        ...ecKey,
        '-keyout',
        pki.servingKey,
        '-out',
        pki.servingCert,
        '-subj',
        '/CN=kube-apiserver',
        '-addext',
        `subjectAltName=${sans}`,
        '-addext',
        'extendedKeyUsage=serverAuth',
        '-addext',
        'basicConstraints=critical,CA:FALSE',
      ],
      'the API server serving certificate',
    ),
    openssl(
      [
        'req',
        ...signedByCa,
        ...ecKey,
        '-keyout',
        pki.adminKey,
        '-out',
        pki.adminCert,
        '-subj',
        '/O=system:masters/CN=homeostat-admin',
        '-addext',
        'extendedKeyUsage=clientAuth',
        '-addext',
        'basicConstraints=critical,CA:FALSE',
      ],
      'the admin client certificate',
    ),
    openssl(
      [
        'genpkey',
        '-algorithm',
        'EC',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-out',
        pki.serviceAccountKey,
      ],
      'the service-account signing key',
    ),
  ]);
  await openssl(
    ['pkey', '-in', pki.serviceAccountKey, '-pubout', '-out', pki.serviceAccountPub],
    'the service-account public key',
  );
  return pki;
}

/** Reads a PEM file as base64, the form kubeconfig `*-data` fields take. */
export async function pemAsBase64(path: string): Promise<string> {
  return Buffer.from(await readFile(path)).toString('base64');
}
