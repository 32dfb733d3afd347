// Typed access to images.json, the single list of image references: operators take their
// default operand images from here, the image builder builds exactly these names offline.
import catalogue from './images.json' with { type: 'json' };

/** Operand images, by operand: the tags each operator uses by default. */
export const operandImages: {
  memcached: string;
  memcachedExporter: string;
  etcd: string;
  etcd37: string;
  postgres17: string;
  postgres18: string;
} = catalogue.operands;
/** Base images that operator and operand Dockerfiles build `FROM`. */
export const baseImages: { debian: string; debianTrixie: string; debianForky: string; node: string } =
  catalogue.bases;
/** Images only the local cluster itself runs: the pod sandbox, the cluster DNS, the volume provisioner. */
export const clusterImages: { pause: string; coredns: string; localPathProvisioner: string } =
  catalogue.cluster;
/** Images the e2e suites run themselves: the S3-compatible server backups are written to. */
export const suiteImages: { s3: string } = catalogue.suites;
/**
 * The monitoring addon's images (Prometheus, the Prometheus Operator and its config reloader):
 * built and imported only when the monitoring suite installs the addon, never with the others.
 */
export const monitoringImages: {
  prometheus: string;
  prometheusOperator: string;
  prometheusConfigReloader: string;
} = catalogue.monitoring;
/**
 * Operator images by workspace folder under operators/, each built from operators/Dockerfile
 * with that folder as OPERATOR: each chart's default image. An operator joins by a line in images.json.
 */
export const operatorImages: Readonly<typeof catalogue.operators> = catalogue.operators;

/** What runs in a cluster under test (imported or loaded into it); base images are built, never imported. */
export const workloadImages = (): string[] => [
  ...Object.values(operandImages),
  ...Object.values(suiteImages),
  ...Object.values(operatorImages),
];
