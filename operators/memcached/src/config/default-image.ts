// The operand image a Memcached runs when it names none. Kept equal to e2e/images/images.json
// (operands.memcached) and the chart's memcachedImage value; a test checks all three agree.
export const defaultMemcachedImage = 'docker.io/library/memcached:1.6.45';

// The exporter sidecar's image (each pod's metrics), kept equal to images.json
// (operands.memcachedExporter) and the chart's memcachedExporterImage value the same way.
export const defaultMemcachedExporterImage = 'ghcr.io/homeostat/memcached-exporter:0.1.0';
