#!/usr/bin/env node
// Offline validation of the manifests `nfsrdma-bench kube` renders, with no
// cluster: each document against the Kubernetes API schema (the
// kubernetes-models classes, whose validators are compiled from the
// official OpenAPI definitions), unknown fields (fields.mjs), and the
// semantic rules the schema lacks (pod-rules.mjs, object-rules.mjs). An
// MPIJob's pod templates are checked as core PodTemplateSpecs.
//
// usage: node validate.mjs [--expect-invalid] PATH...
//   PATH is a YAML file (one or more documents) or a directory (its *.yaml
//   files, in name order, as `kubectl apply -f DIR` takes them); each PATH
//   is one set, and references (claims, ConfigMap keys) must resolve within
//   it. Exit 0 when every set is valid.
//   --expect-invalid: every set must be refused, and each `# expect: TEXT`
//   line in its files must be part of some error; exit 0 when so. This is
//   how the negative cases show that the checks can fail at all.
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { ConfigMap, PersistentVolumeClaim, PodTemplateSpec } from "kubernetes-models/v1";
import { Job } from "kubernetes-models/batch/v1";
import { checkObject } from "./fields.mjs";
import { checkClaim, checkConfigMap, checkJob, checkMpiJob, checkName } from "./object-rules.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeModules = path.join(here, "node_modules");
const models = path.join(nodeModules, "kubernetes-models");

const KINDS = {
  "v1/ConfigMap": { model: ConfigMap, dts: "v1/ConfigMap", check: (d, ctx, e) => checkConfigMap(d, e) },
  "v1/PersistentVolumeClaim": { model: PersistentVolumeClaim, dts: "v1/PersistentVolumeClaim", check: (d, ctx, e) => checkClaim(d, e) },
  "batch/v1/Job": { model: Job, dts: "batch/v1/Job", check: checkJob },
  "kubeflow.org/v2beta1/MPIJob": { check: checkMpiJob },
};

// The documents of a set: [{ source, doc }]; a YAML error is a set error.
function readSet(target, errors) {
  const files = statSync(target).isDirectory()
    ? readdirSync(target).filter((f) => f.endsWith(".yaml")).sort().map((f) => path.join(target, f))
    : [target];
  const docs = [];
  for (const file of files) {
    for (const d of parseAllDocuments(readFileSync(file, "utf8"))) {
      if (d.errors.length) errors.push(`${file}: YAML: ${d.errors[0].message}`);
      const doc = d.toJS();
      if (doc !== null && doc !== undefined) docs.push({ source: file, doc });
    }
  }
  return { files, docs };
}

function byName(docs, kind) {
  const out = new Map();
  for (const { doc } of docs) {
    if (doc.kind === kind) out.set(`${doc.metadata?.namespace ?? ""}/${doc.metadata?.name}`, doc);
  }
  return out;
}

function schemaErrors(Model, value, where) {
  try {
    new Model(value).validate();
    return [];
  } catch (e) {
    return [`${where}: schema: ${e.message}`];
  }
}

function checkDocument(doc, set) {
  const errors = [];
  const kind = KINDS[`${doc.apiVersion}/${doc.kind}`];
  if (!kind) return [`apiVersion ${doc.apiVersion}, kind ${doc.kind}: not a kind this validator knows`];
  const ctx = { namespace: doc.metadata?.namespace ?? "", configMaps: set.configMaps, claims: set.claims, templates: [] };
  if (kind.model) {
    errors.push(...schemaErrors(kind.model, doc, "document"));
    checkObject(doc, path.join(models, `${kind.dts}.d.ts`), "", errors, nodeModules);
  }
  checkName(doc, errors);
  kind.check(doc, ctx, errors);
  for (const [where, template] of ctx.templates) {
    errors.push(...schemaErrors(PodTemplateSpec, template ?? {}, where));
    checkObject(template, path.join(models, "v1/PodTemplateSpec.d.ts"), where, errors, nodeModules);
  }
  return errors;
}

// Every document's errors, each line "Kind/name: error".
function validateSet(target) {
  const errors = [];
  const { files, docs } = readSet(target, errors);
  if (docs.length === 0) errors.push(`${target}: no documents`);
  const set = { configMaps: byName(docs, "ConfigMap"), claims: byName(docs, "PersistentVolumeClaim") };
  for (const { doc } of docs) {
    const label = `${doc.kind}/${doc.metadata?.name}`;
    errors.push(...checkDocument(doc, set).map((e) => `${label}: ${e}`));
  }
  return { files, docs, errors };
}

function expectations(files) {
  return files.flatMap((f) => [...readFileSync(f, "utf8").matchAll(/^# expect: (.+)$/gm)].map((m) => m[1].trim()));
}

function reportValid(target, r) {
  if (r.errors.length === 0) {
    console.log(`ok      ${target}: ${r.docs.map(({ doc }) => `${doc.kind}/${doc.metadata?.name}`).join(", ")}`);
    return true;
  }
  for (const e of r.errors) console.log(`INVALID ${target}: ${e}`);
  return false;
}

function reportRefused(target, r) {
  const wanted = expectations(r.files);
  const missing = wanted.filter((w) => !r.errors.some((e) => e.includes(w)));
  if (r.errors.length > 0 && wanted.length > 0 && missing.length === 0) {
    console.log(`refused ${target}: ${wanted.map((w) => r.errors.find((e) => e.includes(w))).join(" | ")}`);
    return true;
  }
  if (r.errors.length === 0) console.log(`ACCEPTED ${target}: expected it to be refused`);
  if (wanted.length === 0) console.log(`NO-EXPECT ${target}: a negative case needs '# expect: TEXT' lines`);
  for (const w of missing) console.log(`MISSED  ${target}: no error contains '${w}' (errors: ${r.errors.join(" | ")})`);
  return false;
}

function main(argv) {
  const expectInvalid = argv[0] === "--expect-invalid";
  const targets = expectInvalid ? argv.slice(1) : argv;
  if (targets.length === 0) {
    console.error("usage: node validate.mjs [--expect-invalid] PATH...");
    return 2;
  }
  let good = 0;
  for (const t of targets) {
    const r = validateSet(t);
    if (expectInvalid ? reportRefused(t, r) : reportValid(t, r)) good += 1;
  }
  const what = expectInvalid ? "refused as expected" : "valid";
  console.log(`kube-validate: ${good} of ${targets.length} sets ${what}`);
  return good === targets.length ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
