import { chartDependenciesGlobalSetup } from '@homeostat/operator-kit/testing';
import { etcdChart } from '../chart/etcd-chart.ts';

// The chart tests render charts/etcd-operator; its library chart is vendored once, first.
export default chartDependenciesGlobalSetup(etcdChart);
