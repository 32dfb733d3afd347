// The PostgreSQL operator's chart as the operator kit generates and tests it: its CRDs, the values
// only this operator has and its OLM listing. Everything else in charts/postgres-operator is shared.
import { Type } from '@sinclair/typebox';
import type { OperatorChart } from '@homeostat/operator-kit/chart';
import { postgresBackupCrd } from '../api/postgres-backup-crd.ts';
import { postgresClusterCrd } from '../api/postgres-cluster-crd.ts';
import { defaultPostgresImages } from '../config/default-images.ts';
import { postgresDashboard } from './postgres-dashboard.ts';
import { postgresOlm } from './postgres-olm.ts';

export const postgresChart: OperatorChart = {
  name: 'postgres-operator',
  workspace: 'operators/postgres',
  dashboard: postgresDashboard,
  olm: postgresOlm,
  crds: [postgresClusterCrd, postgresBackupCrd],
  values: {
    postgres17Image: Type.String({
      minLength: 1,
      description:
        "Image of every PostgreSQLCluster of postgresVersion 17 that sets no spec.image (the operator's POSTGRES_17_IMAGE); it must carry the instance entrypoint.",
      default: defaultPostgresImages[17],
    }),
    postgres18Image: Type.String({
      minLength: 1,
      description:
        "Image of every PostgreSQLCluster of postgresVersion 18 that sets no spec.image (the operator's POSTGRES_18_IMAGE); it must carry the instance entrypoint.",
      default: defaultPostgresImages[18],
    }),
    probeIntervalMs: Type.Integer({
      minimum: 100,
      description:
        "How often each cluster's instances are probed over SQL, in milliseconds: how soon a failed primary is noticed (failoverDelay counts from then).",
      default: 500,
    }),
  },
};
