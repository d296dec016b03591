// What the API server, the kubelet or the scheduler would refuse or get
// wrong in a pod template, and which no JSON schema can say: references
// between fields (a mount naming no volume, $(VAR) naming no variable, a
// claim or ConfigMap key that is not in the documents applied together) and
// rules on values (names, unique names, hostNetwork's DNS policy, a
// placement rule that selects none of its own pods).

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isDnsLabel(s) {
  return typeof s === "string" && s.length <= 63 && DNS_LABEL.test(s);
}

function uniqueNames(items, what, where, errors) {
  const seen = new Set();
  (items ?? []).forEach((item, i) => {
    if (!isDnsLabel(item?.name)) errors.push(`${where}[${i}].name: '${item?.name}' is not a DNS label (${what})`);
    if (seen.has(item?.name)) errors.push(`${where}[${i}].name: '${item.name}' is used twice (${what})`);
    seen.add(item?.name);
  });
}

// The ConfigMap named by a reference: in the same documents and namespace.
function configMapKeys(ctx, name) {
  const cm = ctx.configMaps.get(`${ctx.namespace}/${name}`);
  return cm ? new Set(Object.keys(cm.data ?? {})) : null;
}

function checkConfigMapRef(ref, ctx, where, errors) {
  if (!ref || ref.optional) return;
  const keys = configMapKeys(ctx, ref.name);
  if (!keys) {
    errors.push(`${where}: ConfigMap '${ref.name}' is not among the documents`);
  } else if (ref.key !== undefined && !keys.has(ref.key)) {
    errors.push(`${where}: ConfigMap '${ref.name}' has no key '${ref.key}'`);
  }
}

// The variables a container's $(NAME) may name: its env and the keys its
// envFrom ConfigMaps bring.
function declaredVariables(c, ctx, where, errors) {
  const names = new Set();
  (c.env ?? []).forEach((e, i) => {
    names.add(e.name);
    checkConfigMapRef(e.valueFrom?.configMapKeyRef, ctx, `${where}.env[${i}].valueFrom.configMapKeyRef`, errors);
  });
  (c.envFrom ?? []).forEach((e, i) => {
    const ref = e.configMapRef;
    checkConfigMapRef(ref, ctx, `${where}.envFrom[${i}].configMapRef`, errors);
    const keys = ref ? configMapKeys(ctx, ref.name) : null;
    for (const k of keys ?? []) names.add(`${e.prefix ?? ""}${k}`);
  });
  return names;
}

// The kubelet leaves a $(NAME) it cannot resolve as written: the process
// would get the literal text "$(NAME)" as an argument.
function checkExpansions(c, names, where, errors) {
  for (const field of ["command", "args"]) {
    (c[field] ?? []).forEach((arg, i) => {
      for (const m of String(arg).replaceAll("$$", "").matchAll(/\$\(([^)]*)\)/g)) {
        if (!names.has(m[1])) errors.push(`${where}.${field}[${i}]: $(${m[1]}) names no variable of the container`);
      }
    });
  }
}

function checkMounts(c, volumes, where, errors) {
  const paths = new Set();
  (c.volumeMounts ?? []).forEach((m, i) => {
    if (!volumes.has(m.name)) errors.push(`${where}.volumeMounts[${i}]: names volume '${m.name}', which the pod does not have`);
    if (paths.has(m.mountPath)) errors.push(`${where}.volumeMounts[${i}]: mountPath ${m.mountPath} is mounted twice`);
    paths.add(m.mountPath);
  });
}

// A device plugin's resource is whole devices: requests equal limits.
function checkExtendedResources(c, where, errors) {
  const { limits = {}, requests = {} } = c.resources ?? {};
  for (const [name, value] of Object.entries({ ...requests, ...limits })) {
    if (!name.includes("/") || name.startsWith("kubernetes.io/")) continue;
    if (!/^[0-9]+$/.test(String(value))) errors.push(`${where}.resources: ${name}: ${value} is not a whole number of devices`);
    if (name in requests && name in limits && String(requests[name]) !== String(limits[name])) {
      errors.push(`${where}.resources: ${name}: requests ${requests[name]} differ from limits ${limits[name]}`);
    }
  }
}

function checkContainers(spec, ctx, where, errors) {
  const containers = spec.containers ?? [];
  if (containers.length === 0) errors.push(`${where}.containers: the pod has no container`);
  uniqueNames(containers, "container", `${where}.containers`, errors);
  const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
  containers.forEach((c, i) => {
    const at = `${where}.containers[${i}]`;
    if (!c.image) errors.push(`${at}.image: missing (the pod cannot start)`);
    checkExpansions(c, declaredVariables(c, ctx, at, errors), at, errors);
    checkMounts(c, volumes, at, errors);
    checkExtendedResources(c, at, errors);
  });
}

function checkClaimSpec(spec, where, errors) {
  if (!spec?.accessModes?.length) errors.push(`${where}.accessModes: none given`);
  if (spec?.resources?.requests?.storage === undefined) errors.push(`${where}.resources.requests.storage: missing`);
}

function checkVolumes(spec, ctx, where, errors) {
  uniqueNames(spec.volumes, "volume", `${where}.volumes`, errors);
  (spec.volumes ?? []).forEach((v, i) => {
    const at = `${where}.volumes[${i}]`;
    const claim = v.persistentVolumeClaim?.claimName;
    if (claim !== undefined && !ctx.claims.has(`${ctx.namespace}/${claim}`)) {
      errors.push(`${at}.persistentVolumeClaim: PersistentVolumeClaim '${claim}' is not among the documents`);
    }
    if (v.configMap) checkConfigMapRef({ name: v.configMap.name, optional: v.configMap.optional }, ctx, `${at}.configMap`, errors);
    if (v.ephemeral) checkClaimSpec(v.ephemeral.volumeClaimTemplate?.spec, `${at}.ephemeral.volumeClaimTemplate.spec`, errors);
  });
}

function selects(selector, labels) {
  const wanted = Object.entries(selector?.matchLabels ?? {});
  return wanted.length > 0 && wanted.every(([k, v]) => labels[k] === v);
}

// A rule meant to keep a template's pods apart must select those pods.
function checkPlacement(spec, labels, where, errors) {
  const terms = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  terms.forEach((t, i) => {
    if (!selects(t.labelSelector, labels)) {
      errors.push(`${where}.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[${i}].labelSelector: selects none of the template's own pods (labels ${JSON.stringify(labels)})`);
    }
  });
  (spec.topologySpreadConstraints ?? []).forEach((t, i) => {
    if (!selects(t.labelSelector, labels)) errors.push(`${where}.topologySpreadConstraints[${i}].labelSelector: selects none of the template's own pods`);
  });
}

// template: a PodTemplateSpec; ctx: { namespace, configMaps, claims,
// restartPolicies } (the pod restart policies the owner allows).
export function checkPodTemplate(template, ctx, where, errors) {
  const spec = template?.spec ?? {};
  const labels = template?.metadata?.labels ?? {};
  const at = `${where}.spec`;
  checkContainers(spec, ctx, at, errors);
  checkVolumes(spec, ctx, at, errors);
  checkPlacement(spec, labels, at, errors);
  if (spec.hostNetwork && spec.dnsPolicy !== "ClusterFirstWithHostNet") {
    errors.push(`${at}.dnsPolicy: ${spec.dnsPolicy ?? "ClusterFirst (default)"} with hostNetwork resolves no cluster names; expected ClusterFirstWithHostNet`);
  }
  if (ctx.restartPolicies && !ctx.restartPolicies.includes(spec.restartPolicy)) {
    errors.push(`${at}.restartPolicy: ${spec.restartPolicy ?? "Always (default)"}; expected ${ctx.restartPolicies.join(" or ")}`);
  }
}

export { checkClaimSpec, selects };
