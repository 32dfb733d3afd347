// Where a cluster's backups and WAL archive live: the same S3 shape as the etcd operator's
// destination (libs/operator-kit/src/api/s3-destination-schema.ts), so a platform team writes one kind
// of destination for both. The credentials are read from the named Secret by the caller; this
// layer only ever receives their values, and only passes them on through the environment or a
// mounted file.

/** An S3-compatible bucket, as `spec.backup.destination.s3` spells it (the CA as a mounted file). */
export interface S3Destination {
  readonly bucket: string;
  /** Key prefix of the repository, e.g. "prod/pg/"; the bucket's root when absent. */
  readonly prefix?: string;
  /** https://host[:port] of an S3-compatible server; Amazon S3 when absent. */
  readonly endpoint?: string;
  readonly region: string;
  readonly forcePathStyle: boolean;
  /** A PEM bundle the server's certificate must chain to (a private CA); the system's when absent. */
  readonly caFile?: string;
}

/** The values of the destination's credentials Secret (keys accessKeyId, secretAccessKey, sessionToken). */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** Every credential value, for redaction. */
export function credentialValues(credentials: S3Credentials): string[] {
  return [credentials.accessKeyId, credentials.secretAccessKey, credentials.sessionToken ?? ''].filter(
    (v) => v.length > 0,
  );
}
