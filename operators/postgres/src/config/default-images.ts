// The PostgreSQL image each supported major version runs when a cluster names none: Debian's
// PostgreSQL (trixie carries 17, forky 18) with the instance entrypoint, built offline by
// `npm run images`. A Record over the supported versions, so adding a version to
// api/postgres-versions.ts does not compile until it has an image.
import type { MajorVersion } from '../api/postgres-versions.ts';

export const defaultPostgresImages: Readonly<Record<MajorVersion, string>> = {
  17: 'ghcr.io/homeostat/postgresql:17',
  18: 'ghcr.io/homeostat/postgresql:18',
};
