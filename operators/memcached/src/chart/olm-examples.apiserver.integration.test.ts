// Creates every example the OLM bundle offers a console user on a real kube-apiserver.
import { describeOlmExamples } from '@homeostat/operator-kit/testing';
import { memcachedChart } from './memcached-chart.ts';

describeOlmExamples(memcachedChart);
