/**
 * Look-ahead into the operation: which fields the client selected below the current field, so a
 * resolver can fetch what will be asked for in one go. Fragments (inline and named) are expanded;
 * @skip/@include are ignored, so the answer may name a field that ends up skipped (harmless: the
 * only use is to prefetch).
 */
import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

function collect(info: GraphQLResolveInfo, sets: readonly SelectionSetNode[], into: Map<string, SelectionSetNode[]>, seen = new Set<string>()): void {
  for (const set of sets) {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const list = into.get(sel.name.value) ?? [];
        if (sel.selectionSet) list.push(sel.selectionSet);
        into.set(sel.name.value, list);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        collect(info, [sel.selectionSet], into, seen);
      } else if (!seen.has(sel.name.value)) {
        seen.add(sel.name.value);
        const fragment = info.fragments[sel.name.value];
        if (fragment) collect(info, [fragment.selectionSet], into, seen);
      }
    }
  }
}

/**
 * Answers by field node and path. The answer depends only on the parsed document (directives are
 * ignored), and Apollo hands the same parsed document to every request with the same query text.
 */
const remembered = new WeakMap<FieldNode, Map<string, ReadonlySet<string>>>();

/** The names of the fields selected at `path` below the current field (e.g. ['items'] of a page). */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[] = []): ReadonlySet<string> {
  if (info.fieldNodes.length !== 1) return collectAt(info, path);
  const node = info.fieldNodes[0]!;
  let byPath = remembered.get(node);
  if (!byPath) remembered.set(node, (byPath = new Map()));
  const key = path.join('.');
  let fields = byPath.get(key);
  if (!fields) byPath.set(key, (fields = collectAt(info, path)));
  return fields;
}

function collectAt(info: GraphQLResolveInfo, path: readonly string[]): Set<string> {
  let sets = info.fieldNodes.flatMap((f) => (f.selectionSet ? [f.selectionSet] : []));
  for (const step of path) {
    const fields = new Map<string, SelectionSetNode[]>();
    collect(info, sets, fields);
    sets = fields.get(step) ?? [];
  }
  const fields = new Map<string, SelectionSetNode[]>();
  collect(info, sets, fields);
  return new Set(fields.keys());
}
