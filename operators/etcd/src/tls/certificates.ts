// The cluster CA and the certificates it signs are minted by the shared library (the PostgreSQL
// operator makes its own the same way); this name stays so etcd's modules and tests import as before.
export * from '@homeostat/operator-kit/tls';
