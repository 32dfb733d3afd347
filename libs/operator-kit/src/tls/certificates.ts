// A small certificate authority for one operand cluster (etcd, PostgreSQL): a CA, and certificates
// it signs for the members or instances (serving clients and peers) and for clients. ECDSA P-256 keys (milliseconds to make,
// accepted by Go's TLS and Node's), PEM in and out, so they travel in Kubernetes Secrets.
// @peculiar/x509 resolves its algorithm providers through tsyringe, which needs the Reflect
// metadata API loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const crypto = webcrypto;
x509.cryptoProvider.set(crypto);

/** A certificate and its private key (PKCS#8), both PEM. */
export interface CertificatePem {
  readonly certificate: string;
  readonly privateKey: string;
}

export interface CertificateRequest {
  readonly commonName: string;
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  /** `server`: TLS server authentication; `client`: TLS client authentication (peers need both). */
  readonly usages: readonly ('server' | 'client')[];
  readonly validDays: number;
}

const day = 24 * 60 * 60 * 1000;

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return crypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

// Valid from a minute ago: a member whose clock runs slightly behind the operator's must accept it.
const notBefore = () => new Date(Date.now() - 60_000);

/** A self-signed CA that may sign certificates (and no further CAs). */
export async function createCertificateAuthority(
  commonName: string,
  validDays: number,
): Promise<CertificatePem> {
  const keys = await keyPair();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${commonName}`,
    keys,
    notBefore: notBefore(),
    notAfter: new Date(Date.now() + validDays * day),
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate: certificate.toString('pem'), privateKey: await privateKeyPem(keys.privateKey) };
}

/** A leaf certificate for `request`, signed by `ca`. */
export async function issueCertificate(
  ca: CertificatePem,
  request: CertificateRequest,
): Promise<CertificatePem> {
  const caCertificate = new x509.X509Certificate(ca.certificate);
  const caKey = await crypto.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(ca.privateKey),
    algorithm,
    false,
    ['sign'],
  );
  const keys = await keyPair();
  const names = [
    ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const usages = request.usages.map((u) =>
    u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
  );
  const certificate = await x509.X509CertificateGenerator.create({
    subject: `CN=${request.commonName}`,
    issuer: caCertificate.subject,
    publicKey: keys.publicKey,
    signingKey: caKey,
    notBefore: notBefore(),
    notAfter: new Date(Date.now() + request.validDays * day),
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension(usages),
      ...(names.length ? [new x509.SubjectAlternativeNameExtension(names)] : []),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate: certificate.toString('pem'), privateKey: await privateKeyPem(keys.privateKey) };
}

/** The subject common name (CN) of a PEM certificate, or undefined when it has none. */
export function commonNameOf(certificatePem: string): string | undefined {
  const certificate = new x509.X509Certificate(certificatePem);
  return certificate.subjectName.getField('CN')[0];
}

/** The moment a PEM certificate stops being valid. */
export function notAfterOf(certificatePem: string): Date {
  return new x509.X509Certificate(certificatePem).notAfter;
}

/**
 * The lifetimes the operators give what they generate: a CA ten years, what it signs five, issued
 * again in place once less than a third of that is left (clients and members read certificate
 * files again, so a renewal restarts nothing and leaves years to spare).
 */
export const caValidDays = 3650;
export const certificateValidDays = 1825;
export const renewBeforeDays = Math.floor(certificateValidDays / 3);

/** A certificate that expires within `renewBeforeDays` (or is absent or unreadable) is issued again. */
export function needsRenewal(certificatePem: string | undefined, now: Date): boolean {
  if (!certificatePem) return true;
  try {
    return notAfterOf(certificatePem).getTime() - now.getTime() < renewBeforeDays * day;
  } catch {
    return true;
  }
}
