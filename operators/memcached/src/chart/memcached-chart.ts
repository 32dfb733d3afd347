// The Memcached operator's chart as the operator kit generates and tests it: its CRD and the one
// value only this operator has, and its OLM listing. Everything else in charts/memcached-operator is shared.
import { Type } from '@sinclair/typebox';
import { serviceMonitorValues, type OperatorChart } from '@homeostat/operator-kit/chart';
import { memcachedCrd } from '../api/memcached-crd.ts';
import { defaultMemcachedExporterImage, defaultMemcachedImage } from '../config/default-image.ts';
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
    memcachedExporterImage: Type.String({
      minLength: 1,
      description:
        "Image of the metrics sidecar of every Memcached that sets no spec.exporter.image (the operator's MEMCACHED_EXPORTER_IMAGE).",
      default: defaultMemcachedExporterImage,
    }),
    cachesServiceMonitor: serviceMonitorValues(
      "Create a ServiceMonitor that scrapes every Memcached pod's metrics sidecar (port metrics of each Memcached's Service) in the watched namespaces (needs the Prometheus Operator CRDs).",
      'Prometheus Operator ServiceMonitor for the Memcached pods’ metrics.',
    ),
  },
};
