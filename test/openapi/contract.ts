/**
 * Checks recorded HTTP exchanges against the OpenAPI document: the operation exists, the status is
 * documented for it, the body validates against the documented schema (ajv, JSON Schema 2020-12 +
 * formats), and every required response header is present with a valid value.
 *
 * Stricter than the document on one point: objects that list their `properties` get
 * `unevaluatedProperties: false` here, so a field the API sends but the document does not describe
 * fails the test (the document itself leaves objects open, so that clients tolerate additions).
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import type { RecordedExchange } from '../support/harness.js';

export type Doc = { paths: Record<string, Record<string, any>>; components: Record<string, any>; [k: string]: unknown };

export interface Operation {
  method: string;
  template: string;
  op: any;
  regex: RegExp;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operationsOf(doc: Doc): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      const regex = new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+') + '$');
      out.push({ method: method.toUpperCase(), template, op: item[method], regex });
    }
  }
  return out;
}

/** Adds `unevaluatedProperties: false` to every object schema that lists properties and says nothing about others. */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (!node || typeof node !== 'object') return node;
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) o[k] = k === 'example' || k === 'default' || k === 'enum' ? v : closeObjects(v);
  if (o.properties && typeof o.properties === 'object' && o.additionalProperties === undefined && o.unevaluatedProperties === undefined) {
    o.unevaluatedProperties = false;
  }
  return o;
}

export class ContractChecker {
  readonly ops: Operation[];
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly doc: Doc;

  constructor(doc: Doc) {
    this.doc = doc;
    this.ops = operationsOf(doc);
    this.ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false, allowUnionTypes: true });
    addFormats(this.ajv);
    this.ajv.addKeyword('example');
    // The document's schemas as $defs of one schema; their refs rewritten to match.
    const rewrite = (x: unknown) => JSON.parse(JSON.stringify(x).replace(/#\/components\/schemas\//g, 'components.json#/$defs/'));
    this.ajv.addSchema({ $id: 'components.json', $defs: closeObjects(rewrite(doc.components.schemas ?? {})) as object });
    this.rewrite = (x: unknown) => closeObjects(rewrite(x));
  }

  private readonly rewrite: (x: unknown) => unknown;

  /** Follows a local `$ref` (`#/components/...`) of the document. */
  resolve(x: any): any {
    let cur = x;
    for (let i = 0; cur && typeof cur === 'object' && typeof cur.$ref === 'string' && i < 10; i++) {
      cur = cur.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
    }
    return cur;
  }

  find(method: string, path: string): Operation | undefined {
    const pathname = path.split('?')[0]!;
    return this.ops.find((o) => o.method === method.toUpperCase() && o.regex.test(pathname));
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let v = this.validators.get(key);
    if (!v) {
      v = this.ajv.compile(this.rewrite(schema) as object);
      this.validators.set(key, v);
    }
    return v;
  }

  /** Problems of one exchange (empty when it matches the document). */
  check(x: RecordedExchange): string[] {
    const op = this.find(x.method, x.path);
    const name = `${x.method} ${x.path} → ${x.status}`;
    if (!op) return [`${name}: no operation in the document`];
    const label = `${op.op.operationId} (${op.method} ${op.template}) → ${x.status}`;
    const response = this.resolve(op.op.responses?.[String(x.status)] ?? op.op.responses?.default);
    if (!response) return [`${label}: status ${x.status} is not documented (documented: ${Object.keys(op.op.responses).join(', ')}); body ${x.text.slice(0, 200)}`];
    const problems: string[] = [];
    const content = response.content?.['application/json'];
    if (content?.schema) {
      if (!(x.headers['content-type'] ?? '').startsWith('application/json')) problems.push(`${label}: Content-Type is ${x.headers['content-type']}`);
      const v = this.validator(`${op.method} ${op.template} ${x.status}`, content.schema);
      if (!v(x.body)) {
        problems.push(`${label}: body does not match the schema: ${this.ajv.errorsText(v.errors, { separator: '; ' })}; body ${x.text.slice(0, 300)}`);
      }
    } else if (response.content && x.text !== '') {
      // bytes (a file's contents, a download): the Content-Type must be one documented
      const type = (x.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (!Object.keys(response.content).includes(type)) problems.push(`${label}: Content-Type ${type} is not documented (${Object.keys(response.content).join(', ')})`);
    } else if (x.text !== '') {
      problems.push(`${label}: documented without a body, got ${x.text.slice(0, 200)}`);
    }
    for (const [header, h] of Object.entries<any>(response.headers ?? {})) {
      const def = this.resolve(h);
      const value = x.headers[header.toLowerCase()];
      if (value === undefined) {
        if (def.required) problems.push(`${label}: header ${header} missing`);
        continue;
      }
      if (def.schema?.type === 'integer' && !/^[0-9]+$/.test(value)) problems.push(`${label}: header ${header} is not an integer: ${value}`);
    }
    return problems;
  }
}
