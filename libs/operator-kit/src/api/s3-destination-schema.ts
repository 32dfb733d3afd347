// The S3-compatible bucket a backup goes to, in one shape for every operator that backs up (the
// etcd operator's snapshots, the PostgreSQL operator's pgBackRest repository), so a platform team
// writes one kind of destination for all of them. An operator adds its own rules on top (the
// PostgreSQL operator's tool speaks https only) rather than a second copy of the fields.
import { Type } from '@sinclair/typebox';

/** A Kubernetes object name (DNS subdomain), as a schema with `description`. */
export const dnsSubdomainName = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
    description,
  });

/** The fields of an S3 destination, for an operator that composes them with fields of its own. */
export const s3DestinationProperties = {
  bucket: Type.String({
    minLength: 3,
    maxLength: 63,
    pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$',
    description: 'Bucket name.',
  }),
  prefix: Type.Optional(
    Type.String({
      maxLength: 512,
      pattern: '^[^/].*$',
      description: 'Key prefix of every backup, e.g. "prod/etcd/". Must not start with "/".',
    }),
  ),
  endpoint: Type.Optional(
    Type.String({
      maxLength: 512,
      pattern: '^https?://[^\\s]+$',
      description:
        'URL of an S3-compatible server (MinIO, versitygw, Ceph RGW...). Leave empty for Amazon S3.',
    }),
  ),
  region: Type.String({ maxLength: 64, default: 'us-east-1', description: 'Region of the bucket.' }),
  forcePathStyle: Type.Boolean({
    default: false,
    description:
      'Address the bucket as <endpoint>/<bucket> rather than <bucket>.<endpoint>; most S3-compatible servers need true.',
  }),
  credentialsSecretName: dnsSubdomainName(
    'Secret in the same namespace with the keys accessKeyId and secretAccessKey (and optionally sessionToken).',
  ),
};

/** An S3-compatible bucket and the Secret holding its credentials. */
export const S3Destination = Type.Object(s3DestinationProperties, {
  description: 'An S3-compatible bucket.',
});

/** The keys of the credentials Secret an S3 destination names. */
export const s3CredentialKeys = {
  accessKeyId: 'accessKeyId',
  secretAccessKey: 'secretAccessKey',
  sessionToken: 'sessionToken',
} as const;
