// The Memcached operator's chart as the operator kit generates and tests it: its CRD and the one
// value only this operator has, and its OLM listing. Everything else in charts/memcached-operator is shared.
import { Type } from '@sinclair/typebox';
import type { OperatorChart } from '@homeostat/operator-kit/chart';
import { memcachedCrd } from '../api/memcached-crd.ts';
import { defaultMemcachedImage } from '../config/default-image.ts';
import { memcachedDashboard } from './memcached-dashboard.ts';
import { memcachedOlm } from './memcached-olm.ts';

export const memcachedChart: OperatorChart = {
  name: 'memcached-operator',
  workspace: 'operators/memcached',
  dashboard: memcachedDashboard,
  olm: memcachedOlm,
  crds: [memcachedCrd],
  values: {
    memcachedImage: Type.String({
      minLength: 1,
      description: "Image of every Memcached that sets no spec.image (the operator's MEMCACHED_IMAGE).",
      default: defaultMemcachedImage,
    }),
  },
};
