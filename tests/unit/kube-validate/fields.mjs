// Unknown fields. The Kubernetes OpenAPI definitions, and so the
// kubernetes-models schemas compiled from them, do not forbid properties
// they do not list: `topologySpreadConstraint:` (a missing s) passes the
// schema, while `kubectl apply` (strict field validation, the default since
// Kubernetes 1.27) refuses it. The package ships the same definitions as
// TypeScript declarations, one interface per definition with every field
// and its type; this module reads those to know each object's fields.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const declarations = new Map(); // .d.ts path -> { fields, imports } or null

// `import { IIoK8sApiCoreV1EnvVar } from "./EnvVar";` -> name -> .d.ts path
function importsOf(text, file, nodeModules) {
  const imports = new Map();
  for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
    const spec = m[2];
    const base = spec.startsWith(".") ? path.resolve(path.dirname(file), spec) : path.join(nodeModules, spec);
    imports.set(m[1], `${base}.d.ts`);
  }
  return imports;
}

// A field's type as this module follows it: another definition (ref), a
// list of one (listOf), a string-keyed map of one (mapOf), or a leaf.
function typeOf(text) {
  let m = text.match(/^(IIoK8s\w+);$/);
  if (m) return { ref: m[1] };
  m = text.match(/^Array<(IIoK8s\w+)>;$/);
  if (m) return { listOf: m[1] };
  return { leaf: true };
}

// The first interface of the file: its top-level `"name"?: type;` lines;
// `{ [key: string]: T; }` spans lines and is a map of T.
function fieldsOf(text) {
  const start = text.search(/^export interface I\w+(?: extends [\w, ]+)? \{$/m);
  if (start < 0) return null;
  const lines = text.slice(start).split("\n").slice(1);
  const fields = new Map();
  for (let i = 0; i < lines.length && lines[i] !== "}"; ++i) {
    const m = lines[i].match(/^ {4}"([^"]+)"\??: (.*)$/);
    if (!m) continue;
    if (m[2] === "{") {
      const value = lines[i + 1].match(/^ {8}\[key: string\]: (.*)$/);
      fields.set(m[1], { mapOf: value ? typeOf(value[1]) : { leaf: true } });
    } else {
      fields.set(m[1], typeOf(m[2]));
    }
  }
  return fields;
}

function declaration(file, nodeModules) {
  if (!declarations.has(file)) {
    const text = existsSync(file) ? readFileSync(file, "utf8") : null;
    const fields = text === null ? null : fieldsOf(text);
    declarations.set(file, fields ? { fields, imports: importsOf(text, file, nodeModules) } : null);
  }
  return declarations.get(file);
}

function join(where, key) {
  return where ? `${where}.${key}` : key;
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function checkValue(value, type, decl, where, errors, nodeModules) {
  if (type.mapOf) {
    if (isObject(value)) {
      for (const [k, v] of Object.entries(value)) checkValue(v, type.mapOf, decl, join(where, k), errors, nodeModules);
    }
    return;
  }
  const name = type.ref ?? type.listOf;
  if (!name) return;
  const file = decl.imports.get(name);
  if (!file) return;
  const items = type.listOf && Array.isArray(value) ? value : [value];
  items.forEach((item, i) => {
    checkObject(item, file, type.listOf ? `${where}[${i}]` : where, errors, nodeModules);
  });
}

// Every property of value that the definition in dtsFile does not have,
// at any depth, as "<where>.<name>: unknown field ..." (where "" is the
// document itself).
export function checkObject(value, dtsFile, where, errors, nodeModules) {
  const decl = declaration(dtsFile, nodeModules);
  if (!decl || !isObject(value)) return;
  for (const [k, v] of Object.entries(value)) {
    const type = decl.fields.get(k);
    if (!type) {
      errors.push(`${join(where, k)}: unknown field (not in ${path.basename(dtsFile, ".d.ts")}; kubectl apply refuses it)`);
    } else {
      checkValue(v, type, decl, join(where, k), errors, nodeModules);
    }
  }
}
