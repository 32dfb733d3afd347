// Checks the operator's package of the file-based catalog entry by entry.
import { describeOlmCatalogPackage } from '@homeostat/operator-kit/testing';
import { memcachedChart } from './memcached-chart.ts';

describeOlmCatalogPackage(memcachedChart);
