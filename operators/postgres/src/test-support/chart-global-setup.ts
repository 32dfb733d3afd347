import { chartDependenciesGlobalSetup } from '@homeostat/operator-kit/testing';
import { postgresChart } from '../chart/postgres-chart.ts';

// The chart tests render charts/postgres-operator; its library chart is vendored once, first.
export default chartDependenciesGlobalSetup(postgresChart);
