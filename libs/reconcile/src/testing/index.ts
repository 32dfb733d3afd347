// What tests of an operator built on this library use: a logger they can read, and a stand-in for
// the garbage collector a test control plane lacks; the client side of the stand-in kubelet.
export { memoryLogger } from './memory-logger.ts';
export { GarbageCollectorStandIn } from './garbage-collector.ts';
export { kubeletApi } from './kubelet-api.ts';
