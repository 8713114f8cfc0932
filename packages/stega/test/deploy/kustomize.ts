import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** One Kubernetes object as the manifests spell it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

/** The kustomization.yaml fields this renderer implements; any other field is refused. */
const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'labels', 'images', 'resources']);

interface Kustomization {
  namespace?: string;
  labels?: {
    pairs: Record<string, string>;
    includeSelectors?: boolean;
    includeTemplates?: boolean;
  }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  resources?: string[];
}

/** Kinds that live in no namespace (kustomize leaves their metadata alone). */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
]);

/**
 * Renders a kustomize base the way `kubectl kustomize` does for the fields deploy/k8s uses:
 * the resource files in order, the namespace on every namespaced object, `labels` on
 * metadata (and pod templates with includeTemplates; selectors with includeSelectors), and
 * `images` rewriting container images. Anything else in the kustomization is an error, so
 * a base that starts using more of kustomize cannot be rendered silently wrong here.
 * (For deploy/k8s as written, its output equalled `kubectl kustomize` of kubectl 1.35 /
 * kustomize 5.7.1 object for object; no kustomize binary ships on npm for the test to run.)
 */
export function renderKustomization(dir: string): Manifest[] {
  const kustomization = parseYaml(path.join(dir, 'kustomization.yaml'))[0] as Kustomization &
    Record<string, unknown>;
  const unknown = Object.keys(kustomization).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length > 0)
    throw new Error(`kustomization.yaml: unsupported fields ${unknown.join(', ')}`);
  const objects: Manifest[] = [];
  for (const file of kustomization.resources ?? []) {
    objects.push(...(parseYaml(path.join(dir, file)) as Manifest[]));
  }
  for (const object of objects) {
    if (kustomization.namespace && !CLUSTER_SCOPED.has(object.kind)) {
      object.metadata.namespace = kustomization.namespace;
    }
    for (const label of kustomization.labels ?? []) {
      object.metadata.labels = { ...object.metadata.labels, ...label.pairs };
      const template = object.spec?.template;
      if (label.includeTemplates && template) {
        template.metadata ??= {};
        template.metadata.labels = { ...template.metadata.labels, ...label.pairs };
      }
      if (label.includeSelectors && object.spec?.selector) {
        const selector = object.spec.selector;
        if (selector.matchLabels)
          selector.matchLabels = { ...selector.matchLabels, ...label.pairs };
        else if (object.kind === 'Service') object.spec.selector = { ...selector, ...label.pairs };
      }
    }
    for (const container of podContainers(object)) {
      const image = kustomization.images?.find((i) => i.name === imageName(container.image));
      if (!image) continue;
      const tag = image.newTag ?? container.image.split(':')[1];
      container.image = `${image.newName ?? image.name}${tag ? `:${tag}` : ''}`;
    }
  }
  return objects;
}

/** The containers (init containers included) of a workload's pod template. */
export function podContainers(object: Manifest): { name: string; image: string }[] {
  const pod = object.spec?.template?.spec;
  if (!pod) return [];
  return [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
}

function imageName(image: string): string {
  return image.split('@')[0]?.split(':')[0] ?? image;
}

function parseYaml(file: string): unknown[] {
  const documents = parseAllDocuments(readFileSync(file, 'utf8'));
  const values: unknown[] = [];
  for (const document of documents) {
    if (document.errors.length > 0) {
      throw new Error(`${file}: ${document.errors.map((e) => e.message).join('; ')}`);
    }
    const value = document.toJS();
    if (value !== null && value !== undefined) values.push(value);
  }
  return values;
}
