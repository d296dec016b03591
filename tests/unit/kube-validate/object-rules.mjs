// Rules per kind that the schema does not state: the Job controller's for an
// Indexed Job, the API server's for names, ConfigMap keys and claims, and
// the Kubeflow MPI operator's for an MPIJob (its CRD's published schema
// requires only spec.mpiReplicaSpecs; the operator applies defaults and then
// refuses the rest itself, pkg/apis/kubeflow/validation in its source).
import { checkClaimSpec, checkPodTemplate, isDnsLabel, selects } from "./pod-rules.mjs";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export function checkName(doc, errors) {
  const name = doc.metadata?.name;
  if (typeof name !== "string" || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    errors.push(`metadata.name: '${name}' is not a DNS subdomain name`);
  }
}

export function checkConfigMap(doc, errors) {
  for (const key of Object.keys(doc.data ?? {})) {
    if (!/^[-._a-zA-Z0-9]+$/.test(key)) errors.push(`data.${key}: not a valid ConfigMap key ([-._a-zA-Z0-9]+)`);
  }
}

export function checkClaim(doc, errors) {
  checkClaimSpec(doc.spec, "spec", errors);
}

function isCount(v, min) {
  return Number.isInteger(v) && v >= min;
}

// An Indexed Job of the benchmark: every index at once (completions ==
// parallelism), each pod a client that is not restarted.
export function checkJob(doc, ctx, errors) {
  const spec = doc.spec ?? {};
  if (!isDnsLabel(doc.metadata?.name)) errors.push(`metadata.name: '${doc.metadata?.name}' is not a DNS label (the Job's pods carry it as a label value)`);
  if (spec.completionMode === "Indexed") {
    if (!isCount(spec.completions, 1)) errors.push("spec.completions: an Indexed Job needs completions >= 1");
    if (spec.parallelism !== spec.completions) {
      errors.push(`spec.parallelism: ${spec.parallelism} differs from completions ${spec.completions}: not every index runs at once`);
    }
  }
  if (spec.backoffLimit !== undefined && !isCount(spec.backoffLimit, 0)) errors.push("spec.backoffLimit: must be >= 0");
  if (spec.selector && !selects(spec.selector, spec.template?.metadata?.labels ?? {})) {
    errors.push("spec.selector: does not select the template's labels");
  }
  checkPodTemplate(spec.template, { ...ctx, restartPolicies: ["Never", "OnFailure"] }, "spec.template", errors);
}

const MPI_SPEC_FIELDS = ["slotsPerWorker", "runLauncherAsWorker", "runPolicy", "mpiReplicaSpecs", "sshAuthMountPath", "launcherCreationPolicy", "mpiImplementation"];
const MPI_RUN_POLICY_FIELDS = ["cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit", "schedulingPolicy", "suspend", "managedBy"];
const MPI_REPLICA_FIELDS = ["replicas", "template", "restartPolicy"];

function onlyFields(obj, allowed, where, errors) {
  for (const k of Object.keys(obj ?? {})) {
    if (!allowed.includes(k)) errors.push(`${where}.${k}: unknown field (the operator's ${where} has ${allowed.join(", ")})`);
  }
}

function oneOf(value, allowed, where, errors) {
  if (!allowed.includes(value)) errors.push(`${where}: '${value}'; expected ${allowed.join(", ")}`);
}

// The operator's defaults, as its SetDefaults_MPIJob applies them before
// validating: a field left out is judged by its default.
function withDefaults(spec) {
  const s = structuredClone(spec ?? {});
  s.slotsPerWorker ??= 1;
  s.mpiImplementation ??= "OpenMPI";
  s.launcherCreationPolicy ??= "AtStartup";
  s.runPolicy ??= {};
  s.runPolicy.cleanPodPolicy ??= "None";
  const replicas = s.mpiReplicaSpecs ?? {};
  if (replicas.Launcher) {
    replicas.Launcher.replicas ??= 1;
    replicas.Launcher.restartPolicy ??= "OnFailure";
  }
  if (replicas.Worker) {
    replicas.Worker.replicas ??= 0;
    replicas.Worker.restartPolicy ??= "Never";
  }
  return s;
}

function checkRunPolicy(policy, errors) {
  onlyFields(policy, MPI_RUN_POLICY_FIELDS, "spec.runPolicy", errors);
  oneOf(policy.cleanPodPolicy, ["None", "Running", "All"], "spec.runPolicy.cleanPodPolicy", errors);
  for (const k of ["ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"]) {
    if (policy[k] !== undefined && !isCount(policy[k], 0)) errors.push(`spec.runPolicy.${k}: must be a whole number >= 0`);
  }
}

function checkReplica(replica, role, min, ctx, errors) {
  const where = `spec.mpiReplicaSpecs.${role}`;
  onlyFields(replica, MPI_REPLICA_FIELDS, where, errors);
  oneOf(replica.restartPolicy, ["Never", "OnFailure"], `${where}.restartPolicy`, errors);
  if (role === "Launcher" && replica.replicas !== 1) errors.push(`${where}.replicas: ${replica.replicas}; the operator runs exactly one launcher`);
  if (role === "Worker" && !isCount(replica.replicas, min)) errors.push(`${where}.replicas: ${replica.replicas}; expected >= ${min}`);
  ctx.templates.push([`${where}.template`, replica.template]);
  checkPodTemplate(replica.template, ctx, `${where}.template`, errors);
}

// ctx.templates collects the embedded pod templates for the caller's
// schema check (the core PodTemplateSpec).
export function checkMpiJob(doc, ctx, errors) {
  onlyFields(doc.spec, MPI_SPEC_FIELDS, "spec", errors);
  const spec = withDefaults(doc.spec);
  const replicas = spec.mpiReplicaSpecs;
  if (!replicas || typeof replicas !== "object") return errors.push("spec.mpiReplicaSpecs: missing");
  onlyFields(replicas, ["Launcher", "Worker"], "spec.mpiReplicaSpecs", errors);
  if (!replicas.Launcher) errors.push("spec.mpiReplicaSpecs.Launcher: missing; the operator needs exactly one launcher");
  else checkReplica(replicas.Launcher, "Launcher", 1, ctx, errors);
  if (!replicas.Worker) errors.push("spec.mpiReplicaSpecs.Worker: missing; a run needs at least one worker");
  else checkReplica(replicas.Worker, "Worker", 1, ctx, errors);
  oneOf(spec.mpiImplementation, ["OpenMPI", "Intel", "MPICH"], "spec.mpiImplementation", errors);
  oneOf(spec.launcherCreationPolicy, ["AtStartup", "WaitForWorkersReady"], "spec.launcherCreationPolicy", errors);
  if (!isCount(spec.slotsPerWorker, 0)) errors.push("spec.slotsPerWorker: must be a whole number >= 0");
  checkRunPolicy(spec.runPolicy, errors);
  // The operator names the workers' pods and hosts NAME-worker-INDEX.
  const last = `${doc.metadata?.name}-worker-${Math.max((replicas.Worker?.replicas ?? 1) - 1, 0)}`;
  if (last.length > 63 || !DNS_1035.test(last)) errors.push(`metadata.name: the last worker's host name '${last}' is not a DNS-1035 label`);
  return errors;
}
