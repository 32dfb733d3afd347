// Runs operator-framework/api's validators (tools/olm-validate) on the generated OLM bundle.
import { describeOlmBundleValidation } from '@homeostat/operator-kit/testing';
import { postgresChart } from './postgres-chart.ts';

describeOlmBundleValidation(postgresChart);
