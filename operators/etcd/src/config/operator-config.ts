// The etcd operator's configuration: the settings every operator has (libs/operator-kit) plus
// where etcd images come from and the cluster's DNS domain (members' names end with it).
import { defineOperatorConfig, text, type OperatorConfig as ConfigOf } from '@homeostat/operator-kit';
import { defaultEtcdRepository } from '../api/etcd-versions.ts';
import { defaultOperatorImage, operatorName } from '../controllers/cluster-names.ts';

const settings = {
  etcdImageRepository: {
    flag: 'etcd-image-repository',
    env: 'ETCD_IMAGE_REPOSITORY',
    placeholder: 'repo',
    help: "repository of the etcd images members run (tag v<version>), e.g. a mirror of etcd's own",
    default: defaultEtcdRepository,
    parse: text,
  },
  operatorImage: {
    flag: 'operator-image',
    env: 'OPERATOR_IMAGE',
    placeholder: 'image',
    help: "the operator's own image: the first member of a cluster restored from a backup runs its restore steps in it",
    default: defaultOperatorImage,
    parse: text,
  },
  clusterDomain: {
    flag: 'cluster-domain',
    env: 'CLUSTER_DOMAIN',
    placeholder: 'domain',
    help: "the Kubernetes cluster's DNS domain, which members' peer URLs and certificates end with",
    default: 'cluster.local',
    parse: text,
  },
};

export type OperatorConfig = ConfigOf<typeof settings>;

/** `readConfig` reads flags, then environment variables, then defaults; `usage` lists them. */
export const { read: readConfig, usage } = defineOperatorConfig(operatorName, settings);
