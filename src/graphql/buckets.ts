/**
 * Which rate-limit buckets a GraphQL operation spends from (CONTRACT §6, the same buckets and keys as
 * REST): `auth` for auth fields, `admin` for admin fields, `general` for the others, one request from
 * each bucket its root fields touch (a query that adds `session` to a page of servers spends from
 * `auth` and `general`, so that no field buys another bucket's requests). Only meta fields
 * (`__typename`, introspection) → `general`. Decided from the parsed document before execution, so
 * a rejected request never runs a resolver.
 */
import { Kind, parse, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Bucket } from '../http/rate-limit.js';

/** The twins of /auth/*. */
export const AUTH_FIELDS = new Set(['signUp', 'signIn', 'signOut', 'session']);
/** The twins of /admin/* and /nodes (admin only). A new admin-only root field belongs here. */
export const ADMIN_FIELDS = new Set(['adminUsers', 'adminStats', 'createNodeToken', 'nodes', 'node', 'createNode', 'deleteNode', 'nodeStats']);

/** Root field names of the selected operation (all operations when the name is not given or unknown). */
export function rootFields(doc: DocumentNode, operationName?: string | null): Set<string> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const chosen = operationName ? ops.filter((o) => o.name?.value === operationName) : [];
  const names = new Set<string>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) names.add(sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet);
      else if (sel.kind === Kind.FRAGMENT_SPREAD && !seen.has(sel.name.value)) {
        seen.add(sel.name.value);
        const f = fragments.get(sel.name.value);
        if (f) walk(f.selectionSet);
      }
    }
  };
  for (const op of chosen.length ? chosen : ops) walk(op.selectionSet);
  return names;
}

const GENERAL: readonly Bucket[] = ['general'];

/** The buckets of these root fields, the strictest first. */
export function bucketsForFields(fields: Iterable<string>): readonly Bucket[] {
  let auth = false;
  let admin = false;
  let general = false;
  for (const f of fields) {
    if (AUTH_FIELDS.has(f)) auth = true;
    else if (ADMIN_FIELDS.has(f)) admin = true;
    else if (!f.startsWith('__')) general = true;
  }
  const out: Bucket[] = [];
  if (auth) out.push('auth');
  if (admin) out.push('admin');
  if (general || !out.length) out.push('general');
  return out.length === 1 && out[0] === 'general' ? GENERAL : out;
}

export function bucketsForDocument(doc: DocumentNode | null, operationName?: string | null): readonly Bucket[] {
  return doc ? bucketsForFields(rootFields(doc, operationName)) : GENERAL;
}

/** Query texts remembered with their bucket (most clients send the same few operations). */
const MAX_REMEMBERED = 500;
/** Longer texts are parsed every time rather than kept. */
const MAX_REMEMBERED_LENGTH = 8192;
const remembered = new Map<string, readonly Bucket[]>();

/**
 * The buckets of a request's query text: parsed once per distinct (operation name, text), then
 * remembered (bounded; the oldest entry goes first). Unparsable text is `general`: Apollo reports
 * the syntax error after the request has paid for it.
 */
export function bucketsForQuery(query: unknown, operationName: unknown): readonly Bucket[] {
  const name = typeof operationName === 'string' ? operationName : null;
  if (typeof query !== 'string') return GENERAL;
  const key = query.length <= MAX_REMEMBERED_LENGTH ? `${name ?? ''}\u0000${query}` : null;
  const known = key === null ? undefined : remembered.get(key);
  if (known) return known;
  let doc: DocumentNode | null;
  try {
    doc = parse(query, { maxTokens: 20_000 });
  } catch {
    doc = null;
  }
  const buckets = bucketsForDocument(doc, name);
  if (key !== null) {
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
    remembered.set(key, buckets);
  }
  return buckets;
}
