// The chart's default image is the one images.json builds and the README documents.
import { describeOperatorImage } from '@homeostat/operator-kit/testing';
import { memcachedChart } from './memcached-chart.ts';

describeOperatorImage(memcachedChart);
