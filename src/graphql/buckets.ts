/**
 * What a GraphQL operation costs in rate-limit requests: one per executed root field, aliases
 * included (a document with 1,000 aliased `signUp` fields costs 1,000 `auth` requests, as 1,000 REST
 * calls would), each from the bucket of its operation in src/operations/table.ts and from the budget
 * of the caller or of the client address, as its REST twin. Decided from the parsed document before
 * execution, so a refused request never runs a resolver. A document with only meta fields
 * (`__typename`, introspection) costs one `general` request.
 */
import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import { parseOperationText } from './parse-text.js';
import type { Bucket } from '../http/rate-limit.js';
import { operationOfField, type KeyedBy } from '../operations/table.js';

export interface Charge {
  bucket: Bucket;
  keyedBy: KeyedBy;
  points: number;
}

/** The root field names of the selected operation, one entry per field selection (aliases count). */
export function rootFieldSelections(doc: DocumentNode, operationName?: string | null): string[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const chosen = operationName ? ops.filter((o) => o.name?.value === operationName) : [];
  const names: string[] = [];
  const walk = (set: SelectionSetNode, spread: Set<string>) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) names.push(sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet, spread);
      else if (sel.kind === Kind.FRAGMENT_SPREAD && !spread.has(sel.name.value)) {
        const f = fragments.get(sel.name.value);
        // a fragment spread twice in one selection executes its fields once (they merge)
        if (f) walk(f.selectionSet, new Set([...spread, sel.name.value]));
      }
    }
  };
  for (const op of chosen.length ? chosen : ops) walk(op.selectionSet, new Set());
  return names;
}

const ONE_GENERAL: readonly Charge[] = [{ bucket: 'general', keyedBy: 'user', points: 1 }];

/** The charges of these root field selections, the strictest bucket first. */
export function chargesForFields(fields: Iterable<string>): readonly Charge[] {
  const byKey = new Map<string, Charge>();
  for (const f of fields) {
    if (f.startsWith('__')) continue;
    const op = operationOfField(f);
    const bucket = op?.bucket ?? 'general';
    const keyedBy = op?.keyedBy ?? 'user';
    const k = `${bucket}:${keyedBy}`;
    const c = byKey.get(k);
    if (c) c.points++;
    else byKey.set(k, { bucket, keyedBy, points: 1 });
  }
  if (!byKey.size) return ONE_GENERAL;
  const order: Bucket[] = ['auth', 'admin', 'general'];
  return [...byKey.values()].sort((a, b) => order.indexOf(a.bucket) - order.indexOf(b.bucket));
}

export function chargesForDocument(doc: DocumentNode | null, operationName?: string | null): readonly Charge[] {
  return doc ? chargesForFields(rootFieldSelections(doc, operationName)) : ONE_GENERAL;
}

/** Query texts remembered with their charges (most clients send the same few operations). */
const MAX_REMEMBERED = 500;
/** Longer texts are parsed every time rather than kept. */
const MAX_REMEMBERED_LENGTH = 8192;
const remembered = new Map<string, readonly Charge[]>();

/**
 * The charges of a request's query text: parsed once per distinct (operation name, text), then
 * remembered (bounded; the oldest entry goes first). Unparsable text costs one `general` request:
 * Apollo reports the syntax error after the request has paid for it.
 */
export function chargesForQuery(query: unknown, operationName: unknown): readonly Charge[] {
  const name = typeof operationName === 'string' ? operationName : null;
  if (typeof query !== 'string') return ONE_GENERAL;
  const key = query.length <= MAX_REMEMBERED_LENGTH ? `${name ?? ''}\u0000${query}` : null;
  const known = key === null ? undefined : remembered.get(key);
  if (known) return known;
  let doc: DocumentNode | null;
  try {
    doc = parseOperationText(query);
  } catch {
    doc = null;
  }
  const charges = chargesForDocument(doc, name);
  if (key !== null) {
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
    remembered.set(key, charges);
  }
  return charges;
}
