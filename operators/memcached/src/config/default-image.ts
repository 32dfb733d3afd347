// The operand image a Memcached runs when it names none. Kept equal to e2e/images/images.json
// (operands.memcached) and the chart's memcachedImage value; a test checks all three agree.
export const defaultMemcachedImage = 'docker.io/library/memcached:1.6.45';
