// `kubectl homeostat status [TYPE/]NAME`: one resource at a glance; without a name, every
// Homeostat resource in the namespace, one line each.
import { findResource, listResources } from '../find-resource.ts';
import type { KubectlTarget } from '../kubectl.ts';
import { statusView, summaryTable } from '../status-view.ts';

export async function status(kubectl: KubectlTarget, target: string | undefined): Promise<string[]> {
  if (target === undefined) {
    const resources = await listResources(kubectl);
    return resources.length > 0 ? summaryTable(resources) : ['no Homeostat resources in this namespace'];
  }
  const { resource } = await findResource(kubectl, target);
  return statusView(resource);
}
