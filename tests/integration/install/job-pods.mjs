// Why: `podman kube play` runs Pods (and ConfigMaps) but not batch/v1 Jobs,
// and the run `nfsrdma-bench kube` renders is an Indexed Job. This turns each
// of the Job's completions into the Pod the Job controller would create: its
// pod template, named JOB-INDEX, the image taken from local storage (no
// registry). The downward-API fields podman cannot fill are filled as the
// controller and the kubelet would: the completion index annotation, the
// pod's IP (a host-network pod's is its node's: NODE_IP) and the node's
// name (this host's). Podman does not expand $(VAR) in a container's command
// and args; the kubelet does, from the container's env, and so does this
// (ConfigMap references read from the ConfigMap in the same file). The
// affinity (one client per node) is dropped: podman
// has one node. Everything else, the ConfigMap included, passes unchanged;
// any other kind is an error.
//   node job-pods.mjs RENDERED.yaml NODE_IP > pods.yaml
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';

// yaml comes with the manifest validator's npm packages (install-deps).
const require = createRequire(new URL('../../unit/kube-validate/package.json', import.meta.url));
const YAML = require('yaml');

const [file, nodeIp] = process.argv.slice(2);
if (!file || !nodeIp) {
  console.error('usage: node job-pods.mjs RENDERED.yaml NODE_IP');
  process.exit(2);
}
const docs = YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS()).filter(Boolean);
const configMaps = Object.fromEntries(
  docs.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, o.data ?? {}]),
);
const out = [];
for (const o of docs) {
  if (o.kind === 'ConfigMap') {
    out.push(o);
  } else if (o.kind === 'Job' && o.spec?.completionMode === 'Indexed') {
    for (let i = 0; i < o.spec.completions; i++) out.push(podOf(o, i));
  } else {
    console.error(`job-pods: ${file}: ${o.kind} is neither a ConfigMap nor an Indexed Job`);
    process.exit(1);
  }
}
process.stdout.write(out.map((o) => YAML.stringify(o)).join('---\n'));

function podOf(job, index) {
  const spec = structuredClone(job.spec.template.spec);
  delete spec.affinity;
  const filled = {
    "metadata.annotations['batch.kubernetes.io/job-completion-index']": String(index),
    'status.podIP': nodeIp,
    'spec.nodeName': hostname(),
  };
  for (const c of spec.containers) {
    for (const e of c.env ?? []) {
      const path = e.valueFrom?.fieldRef?.fieldPath;
      if (path === undefined) continue;
      if (!(path in filled)) {
        console.error(`job-pods: ${file}: env ${e.name} reads ${path}, which this cannot fill`);
        process.exit(1);
      }
      delete e.valueFrom;
      e.value = filled[path];
    }
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, envValue(e)]));
    const expand = (arg) =>
      arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name) =>
        m === '$$' ? '$' : name in env && env[name] !== undefined ? env[name] : m,
      );
    if (c.command) c.command = c.command.map(expand);
    if (c.args) c.args = c.args.map(expand);
    c.imagePullPolicy = 'Never';
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${job.metadata.name}-${index}`, labels: job.spec.template.metadata?.labels },
    spec,
  };
}

// An env entry's value: its own, or its ConfigMap key's (undefined: unknown,
// and a $(NAME) of it stays as written, as the kubelet leaves it).
function envValue(e) {
  if (e.value !== undefined) return String(e.value);
  const ref = e.valueFrom?.configMapKeyRef;
  return ref ? configMaps[ref.name]?.[ref.key] : undefined;
}
