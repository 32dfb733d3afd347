// Creates every example the OLM bundle offers a console user on a real kube-apiserver.
import { describeOlmExamples } from '@homeostat/operator-kit/testing';
import { etcdChart } from './etcd-chart.ts';

describeOlmExamples(etcdChart);
