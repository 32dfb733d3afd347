// Every operator chart's values, written once in TypeBox: values.schema.json and values.yaml are
// both generated from this (plus the operator's own values), so a key, its default and its
// description cannot disagree. Objects refuse unknown keys: a typo in a values file fails
// `helm install` instead of being silently ignored.
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { kindsInProse, type OperatorChart } from './operator-chart.ts';

/** An object whose keys are all listed (values.yaml shows each with its default). */
export const closed = <T extends TProperties>(properties: T, description: string): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, description });

/** A Kubernetes object the chart passes through verbatim (securityContext, affinity, ...). */
export const kubeObject = (description: string, value: Record<string, unknown> = {}) =>
  Type.Object({}, { additionalProperties: true, description, default: value });

/** Labels, annotations, node selectors. */
export const stringMap = (description: string) =>
  Type.Record(Type.String(), Type.String(), { description, default: {} });

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/** The whole values schema of `chart`: the common values with the operator's own after imagePullSecrets. */
/** An opt-in Prometheus Operator ServiceMonitor's values: enabled (off), interval, labels. */
export function serviceMonitorValues(enabledDescription: string, description: string) {
  return closed(
    {
      enabled: Type.Boolean({ description: enabledDescription, default: false }),
      interval: Type.String({
        pattern: '^[0-9]+(ms|s|m|h)$',
        description: 'Scrape interval.',
        default: '30s',
      }),
      labels: stringMap(
        'Labels your Prometheus selects ServiceMonitors by (e.g. release: kube-prometheus-stack).',
      ),
    },
    description,
  );
}

export function valuesSchema(chart: OperatorChart): TObject {
  const kinds = kindsInProse(chart);
  const many = chart.crds.length > 1;
  const crds = `${kinds} CRD${many ? 's' : ''}`;
  const them = many ? 'them' : 'it';
  return Type.Object(
    {
      nameOverride: Type.String({ description: 'Replaces the chart name in object names.', default: '' }),
      fullnameOverride: Type.String({
        description: 'Replaces the whole "<release>-<chart>" name.',
        default: '',
      }),
      image: closed(
        {
          repository: Type.String({
            minLength: 1,
            description: 'Operator image repository.',
            default: `ghcr.io/homeostat/${chart.name}`,
          }),
          tag: Type.String({
            description: "Operator image tag; empty means the chart's appVersion.",
            default: '',
          }),
          digest: Type.String({
            pattern: '^(sha256:[a-f0-9]{64})?$',
            description: 'Pins the image by digest (sha256:...); wins over the tag.',
            default: '',
          }),
          pullPolicy: Type.Union(
            [Type.Literal('Always'), Type.Literal('IfNotPresent'), Type.Literal('Never')],
            {
              description: 'When the kubelet pulls the image.',
              default: 'IfNotPresent',
            },
          ),
        },
        'The operator image.',
      ),
      imagePullSecrets: Type.Array(Type.Object({ name: Type.String() }), {
        description: 'Secrets for pulling the operator image, e.g. [{name: regcred}].',
        default: [],
      }),
      ...chart.values,
      replicaCount: Type.Integer({
        minimum: 1,
        maximum: 10,
        description:
          'Operator replicas. More than 1 needs leaderElection.enabled: one leads, the others stand by and take over within about 15 s.',
        default: 1,
      }),
      leaderElection: closed(
        {
          enabled: Type.Boolean({
            description:
              'Lease-based leader election (Lease "<fullname>" in the release namespace). Keep it on unless you run exactly one replica and accept two operators overlapping during a rollout.',
            default: true,
          }),
        },
        'Leader election among operator replicas.',
      ),
      watchNamespaces: Type.Array(Type.String({ minLength: 1, maxLength: 63 }), {
        uniqueItems: true,
        description:
          'Namespaces to watch. Empty: all namespaces (a ClusterRole). Listed: only these (a Role and RoleBinding in each), for clusters where the operator may not read everything.',
        default: [],
      }),
      crds: closed(
        {
          enabled: Type.Boolean({
            description: `Install and upgrade the ${crds} with the chart (templated, unlike crds/, so \`helm upgrade\` updates ${them}). Turn off if you manage CRDs yourself.`,
            default: true,
          }),
          keep: Type.Boolean({
            description: `Annotate the ${crds} with helm.sh/resource-policy: keep, so \`helm uninstall\` never deletes ${them} and with ${them} every ${kinds} in the cluster.`,
            default: true,
          }),
        },
        `The ${crds}.`,
      ),
      rbac: closed(
        {
          create: Type.Boolean({
            description: 'Create the (Cluster)Roles and bindings the operator needs (no wildcards).',
            default: true,
          }),
        },
        'RBAC of the operator.',
      ),
      serviceAccount: closed(
        {
          create: Type.Boolean({ description: 'Create the ServiceAccount.', default: true }),
          name: Type.String({ description: 'Its name; empty means the release fullname.', default: '' }),
          annotations: stringMap('Annotations on the ServiceAccount.'),
        },
        'The ServiceAccount the operator runs as.',
      ),
      logLevel: Type.Union(
        logLevels.map((l) => Type.Literal(l)),
        { description: "Log level of the operator's JSON logs.", default: 'info' },
      ),
      maxConcurrentReconciles: Type.Integer({
        minimum: 1,
        maximum: 32,
        description: `${kindsInProse(chart, 's')} reconciled at once (never two for the same one).`,
        default: 2,
      }),
      jit: Type.Boolean({
        description:
          "Run the operator with V8's JIT compiler. Off (the image's default, --jitless): about 25 MB less memory. On: about a fifth less CPU per reconcile, for operators whose reconciles are CPU-bound (libs/reconcile/README.md measures both). Give it about 30 MB more memory.",
        default: false,
      }),
      // Measured (bench:reconcile, libs/reconcile/README.md): a bundled operator holds 62-70 MB with
      // nothing cached, about 72 MB with 2000 small objects and 115 MB at its peak with 20000.
      resources: kubeObject('Requests and limits of the operator container.', {
        requests: { cpu: '50m', memory: '80Mi' },
        limits: { memory: '192Mi' },
      }),
      podSecurityContext: kubeObject('Pod securityContext (passes Pod Security "restricted").', {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      }),
      securityContext: kubeObject('Container securityContext (passes Pod Security "restricted").', {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      }),
      podAnnotations: stringMap('Annotations on the operator pods.'),
      podLabels: stringMap('Extra labels on the operator pods.'),
      nodeSelector: stringMap('Node labels the operator pods must match.'),
      tolerations: Type.Array(Type.Object({}, { additionalProperties: true, description: 'A toleration.' }), {
        description: 'Tolerations of the operator pods.',
        default: [],
      }),
      affinity: kubeObject('Affinity of the operator pods.'),
      priorityClassName: Type.String({ description: 'PriorityClass of the operator pods.', default: '' }),
      metrics: closed(
        {
          service: closed(
            {
              enabled: Type.Boolean({
                description: 'A ClusterIP Service in front of /metrics (controller_runtime_*, workqueue_*).',
                default: true,
              }),
              port: Type.Integer({
                minimum: 1,
                maximum: 65535,
                description: 'Its port (the container always listens on 8080).',
                default: 8080,
              }),
            },
            'The Service in front of /metrics.',
          ),
        },
        'Prometheus metrics of the operator.',
      ),
      prometheus: closed(
        {
          serviceMonitor: serviceMonitorValues(
            'Create a ServiceMonitor for the metrics Service (needs the Prometheus Operator CRDs).',
            'Prometheus Operator ServiceMonitor for the metrics Service.',
          ),
          prometheusRule: closed(
            {
              enabled: Type.Boolean({
                description:
                  "Create a PrometheusRule with the operator's alerts (needs the Prometheus Operator CRDs and serviceMonitor.enabled: the alerts select the series it scrapes). The alerts are listed in the operator's guide.",
                default: false,
              }),
              labels: stringMap(
                'Labels your Prometheus selects PrometheusRules by (e.g. release: kube-prometheus-stack).',
              ),
            },
            "Prometheus Operator PrometheusRule with the operator's alerts.",
          ),
        },
        'Prometheus Operator integration.',
      ),
      grafana: closed(
        {
          dashboard: closed(
            {
              enabled: Type.Boolean({
                description:
                  "Create a ConfigMap with the operator's Grafana dashboard (dashboards/<chart>.json) for the Grafana sidecar to load. Its queries select the series the ServiceMonitor scrapes; the panels are listed in the operator's guide.",
                default: false,
              }),
              labels: Type.Record(Type.String(), Type.String(), {
                description:
                  'Labels the Grafana sidecar selects dashboard ConfigMaps by (kube-prometheus-stack\'s default: grafana_dashboard: "1").',
                default: { grafana_dashboard: '1' },
              }),
              annotations: stringMap(
                "Annotations on the ConfigMap, e.g. the folder the sidecar files it in (grafana_folder: Databases, with the sidecar's folderAnnotation set to grafana_folder).",
              ),
              namespace: Type.String({
                pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$',
                maxLength: 63,
                description:
                  "Namespace of the ConfigMap; empty means the release's. The sidecar only reads the namespaces it searches (its own by default).",
                default: '',
              }),
            },
            "The operator's Grafana dashboard as a ConfigMap for the Grafana sidecar.",
          ),
        },
        'Grafana integration.',
      ),
      helmTest: closed(
        {
          enabled: Type.Boolean({
            description:
              "Install the `helm test` hook: a pod from the operator's image checks that the operator answers (through metrics.service) and reconciles (it creates a small resource of the operator's kind, in the release's namespace or the first watched one, waits for its first status and deletes it). On success every test object is deleted; on failure the pod stays for `kubectl logs`.",
            default: true,
          }),
        },
        '`helm test <release>`: proves the installed operator answers and reconciles.',
      ),
      // Helm gives every dependency a values scope, the library chart too (with `global` in it),
      // and checks it against this schema; the library takes no values, so nothing else is allowed.
      // Optional: `helm lint` checks values.yaml alone, without that scope.
      'homeostat-operator-lib': Type.Optional(
        closed(
          { global: Type.Object({}, { additionalProperties: true }) },
          "Helm's values scope of the homeostat-operator-lib library chart; it takes no values.",
        ),
      ),
    },
    { additionalProperties: false, description: `Values of the ${chart.name} chart.` },
  );
}

/** values.schema.json as committed in the chart (before formatting). */
export function valuesSchemaJson(chart: OperatorChart): string {
  const schema: TSchema = valuesSchema(chart);
  return `${JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', ...JSON.parse(JSON.stringify(schema)) }, null, 2)}\n`;
}
