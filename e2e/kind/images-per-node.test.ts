import { describe, expect, it } from 'vitest';
import { operandImages, operatorImages, suiteImages } from '../images/image-names.ts';
import { nodesPerImage } from './images-per-node.ts';

const nodes = [
  { name: 'k-control-plane', tainted: true },
  { name: 'k-worker', tainted: false },
  { name: 'k-worker2', tainted: false },
];

describe('nodesPerImage', () => {
  it('loads the operators and the S3 server into every node, since the control plane runs them', () => {
    const placed = nodesPerImage(nodes);
    for (const ref of [...Object.values(operatorImages), suiteImages.s3]) {
      expect(placed.get(ref)).toEqual(['k-control-plane', 'k-worker', 'k-worker2']);
    }
  });

  it('keeps the operands off a tainted control plane', () => {
    const placed = nodesPerImage(nodes);
    for (const ref of Object.values(operandImages))
      expect(placed.get(ref)).toEqual(['k-worker', 'k-worker2']);
  });

  it('loads everything into an untainted control plane (a cluster without workers)', () => {
    const placed = nodesPerImage([{ name: 'k-control-plane', tainted: false }]);
    for (const nodesOfImage of placed.values()) expect(nodesOfImage).toEqual(['k-control-plane']);
  });
});
