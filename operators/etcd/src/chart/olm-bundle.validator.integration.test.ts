// Runs operator-framework/api's validators (tools/olm-validate) on the generated OLM bundle.
import { describeOlmBundleValidation } from '@homeostat/operator-kit/testing';
import { etcdChart } from './etcd-chart.ts';

describeOlmBundleValidation(etcdChart);
