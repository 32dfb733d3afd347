// Labels of what OLM installs: the chart's labels less the one naming the Helm chart, and OLM,
// not Helm, as the manager.

/** The chart's labels as an object OLM installs carries them. */
export function olmLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  const kept = Object.entries(labels).filter(([key]) => key !== 'helm.sh/chart');
  return { ...Object.fromEntries(kept), 'app.kubernetes.io/managed-by': 'olm' };
}
