import { chartDependenciesGlobalSetup } from '@homeostat/operator-kit/testing';
import { memcachedChart } from '../chart/memcached-chart.ts';

// The chart tests render charts/memcached-operator; its library chart is vendored once, first.
export default chartDependenciesGlobalSetup(memcachedChart);
