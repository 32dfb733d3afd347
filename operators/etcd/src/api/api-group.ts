// The API group and version of every kind this operator serves.
export const group = 'etcd.homeostat.dev';
export const version = 'v1alpha1';
export const apiVersion = `${group}/${version}`;
