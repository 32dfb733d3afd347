// The etcd operator's chart as the operator kit generates and tests it: its CRDs, the values only
// this operator has and its OLM listing. Everything else in charts/etcd-operator is shared.
import { Type } from '@sinclair/typebox';
import { serviceMonitorValues, type OperatorChart } from '@homeostat/operator-kit/chart';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { defaultEtcdRepository } from '../api/etcd-versions.ts';
import { etcdDashboard } from './etcd-dashboard.ts';
import { etcdOlm } from './etcd-olm.ts';

export const etcdChart: OperatorChart = {
  name: 'etcd-operator',
  workspace: 'operators/etcd',
  dashboard: etcdDashboard,
  olm: etcdOlm,
  crds: [etcdClusterCrd, etcdBackupCrd],
  values: {
    etcdImageRepository: Type.String({
      minLength: 1,
      description:
        "Repository of the etcd images members run, tagged v<version> as etcd publishes them (the operator's ETCD_IMAGE_REPOSITORY).",
      default: defaultEtcdRepository,
    }),
    clusterDomain: Type.String({
      minLength: 1,
      description:
        "The cluster's DNS domain: members' peer URLs and certificates end with it (CLUSTER_DOMAIN).",
      default: 'cluster.local',
    }),
    membersServiceMonitor: serviceMonitorValues(
      "Create a ServiceMonitor that scrapes every etcd member's own /metrics (port 2381 of each cluster's <name>-peers Service) in the watched namespaces (needs the Prometheus Operator CRDs).",
      "Prometheus Operator ServiceMonitor for the etcd members' own metrics.",
    ),
  },
};
