/**
 * Validates rendered Kubernetes objects against the published API schemas of their kind, in two parts:
 *  1. kubernetes-models / @kubernetes-models/prometheus-operator: the OpenAPI schema of the kind (types, required
 *     fields, enums, formats), through each model's validate();
 *  2. unknown fields: those packages' schemas leave additionalProperties open (as the API server's non-strict
 *     decoding does), so every field of the object is also looked up in the same packages' type declarations
 *     (generated from the same OpenAPI documents) with the TypeScript checker; a field no declaration has is
 *     reported with its path, as `kubectl apply --validate=strict` would.
 */
import { join, resolve } from 'node:path';
import ts from 'typescript';

/** Each kind the chart renders: module of its model (kubernetes-models path) and the class name. */
const KINDS: Record<string, { module: string; name: string }> = {
  'v1/ConfigMap': { module: 'kubernetes-models/v1/ConfigMap', name: 'ConfigMap' },
  'v1/PersistentVolumeClaim': { module: 'kubernetes-models/v1/PersistentVolumeClaim', name: 'PersistentVolumeClaim' },
  'v1/Service': { module: 'kubernetes-models/v1/Service', name: 'Service' },
  'v1/ServiceAccount': { module: 'kubernetes-models/v1/ServiceAccount', name: 'ServiceAccount' },
  'v1/Secret': { module: 'kubernetes-models/v1/Secret', name: 'Secret' },
  'batch/v1/Job': { module: 'kubernetes-models/batch/v1/Job', name: 'Job' },
  'batch/v1/CronJob': { module: 'kubernetes-models/batch/v1/CronJob', name: 'CronJob' },
  'apps/v1/Deployment': { module: 'kubernetes-models/apps/v1/Deployment', name: 'Deployment' },
  'networking.k8s.io/v1/NetworkPolicy': { module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy', name: 'NetworkPolicy' },
  'monitoring.coreos.com/v1/ServiceMonitor': { module: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor', name: 'ServiceMonitor' },
  'monitoring.coreos.com/v1/PrometheusRule': { module: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule', name: 'PrometheusRule' },
};

interface Validatable {
  validate(): void;
}
type ModelClass = new (data: unknown) => Validatable;

const repoRoot = resolve(import.meta.dirname, '../..');

/** The model classes, loaded once. */
const models = new Map<string, ModelClass>();
async function model(key: string): Promise<ModelClass> {
  const known = KINDS[key];
  if (!known) throw new Error(`no schema known for ${key}: add it to KINDS in test/helm/k8s-schema.ts`);
  let cls = models.get(key);
  if (!cls) {
    const mod = (await import(known.module)) as Record<string, ModelClass>;
    cls = mod[known.name]!;
    models.set(key, cls);
  }
  return cls;
}

/** The TypeScript checker over the kinds' declarations, built once (about a second). */
let typeInfo: { checker: ts.TypeChecker; types: Map<string, ts.Type> } | undefined;
function types(): { checker: ts.TypeChecker; types: Map<string, ts.Type> } {
  if (typeInfo) return typeInfo;
  const virtual = join(repoRoot, 'test/helm/__k8s_kinds__.ts');
  const keys = Object.keys(KINDS);
  const source = keys.map((k, i) => `import type { I${KINDS[k]!.name} as K${i} } from '${KINDS[k]!.module}';\nexport type T${i} = K${i};\n`).join('');
  const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, lang, onError) => (resolve(file) === virtual ? ts.createSourceFile(file, source, lang) : getSourceFile(file, lang, onError));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => resolve(file) === virtual || fileExists(file);
  const program = ts.createProgram([virtual], options, host);
  const problems = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (problems.length > 0) throw new Error(`cannot load the kinds' declarations: ${ts.flattenDiagnosticMessageText(problems[0]!.messageText, '\n')}`);
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(virtual)!;
  const out = new Map<string, ts.Type>();
  for (const stmt of file.statements) {
    if (ts.isTypeAliasDeclaration(stmt)) out.set(keys[Number(stmt.name.text.slice(1))]!, checker.getTypeAtLocation(stmt.name));
  }
  typeInfo = { checker, types: out };
  return typeInfo;
}

/** Paths of the fields of `value` that `type` does not declare. */
function unknownFields(checker: ts.TypeChecker, value: unknown, type: ts.Type, path: string, out: string[]): void {
  if (value === null || typeof value !== 'object') return;
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  let t = checker.getNonNullableType(type);
  if (t.isUnion()) {
    const candidates = t.types.filter((m) => m.flags & ts.TypeFlags.Object && checker.isArrayType(m) === Array.isArray(value));
    if (candidates.length === 0) return; // a primitive where an object stands: validate() reports the type
    // Several object shapes (rare): the one that declares the most of the value's fields.
    let best = candidates[0]!;
    let fewest = Infinity;
    for (const c of candidates) {
      const missing: string[] = [];
      unknownFields(checker, value, c, path, missing);
      if (missing.length < fewest) [best, fewest] = [c, missing.length];
    }
    t = best;
  }
  if (Array.isArray(value)) {
    if (!checker.isArrayType(t)) return;
    const element = checker.getTypeArguments(t as ts.TypeReference)[0]!;
    value.forEach((v, i) => unknownFields(checker, v, element, `${path}[${i}]`, out));
    return;
  }
  const index = checker.getIndexTypeOfType(t, ts.IndexKind.String);
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const prop = checker.getPropertyOfType(t, key);
    if (prop) unknownFields(checker, v, checker.getTypeOfSymbol(prop), `${path}.${key}`, out);
    else if (index) unknownFields(checker, v, index, `${path}.${key}`, out);
    else out.push(`${path}.${key}`);
  }
}

/** A rendered object as apiVersion/kind/metadata. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string };
}

/**
 * The schema problems of one object: `[]` when valid. Each problem names the object (`Kind/name`) and the field.
 * An apiVersion/kind the table does not know is itself a problem (the table must grow with the chart).
 */
export async function schemaProblems(obj: KubeObject): Promise<string[]> {
  const key = `${obj.apiVersion}/${obj.kind}`;
  const who = `${obj.kind}/${obj.metadata?.name ?? '?'}`;
  if (!KINDS[key]) return [`${who}: no schema known for ${key}`];
  const problems: string[] = [];
  try {
    new (await model(key))(obj).validate();
  } catch (err) {
    problems.push(`${who}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const { checker, types: byKind } = types();
  const unknown: string[] = [];
  unknownFields(checker, obj, byKind.get(key)!, '', unknown);
  for (const field of unknown) problems.push(`${who}: unknown field ${field.slice(1)}`);
  return problems;
}
