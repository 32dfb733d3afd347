// The PostgreSQL major versions this operator runs: the one list the CRD's enum, the default
// images and the image builds are derived from. A version leaves this list only with a release
// note, since clusters on it would be refused on their next update.

/** Supported PostgreSQL major versions, oldest first. */
export const supportedMajorVersions = [17, 18] as const;

export type MajorVersion = (typeof supportedMajorVersions)[number];

/** The version a PostgreSQLCluster gets when it names none: the newest supported. */
export const defaultMajorVersion: MajorVersion = 18;
