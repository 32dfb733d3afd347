// Checks the operator's package of the file-based catalog entry by entry.
import { describeOlmCatalogPackage } from '@homeostat/operator-kit/testing';
import { etcdChart } from './etcd-chart.ts';

describeOlmCatalogPackage(etcdChart);
