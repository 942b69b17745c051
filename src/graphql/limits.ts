/**
 * Protection against abusive queries: a depth limit and a cost limit (graphql-query-complexity),
 * checked after the operation is resolved and before it runs. Rejections are request errors with
 * HTTP 400 and `extensions.code` QUERY_TOO_DEEP / QUERY_TOO_COMPLEX.
 *
 * Cost: every field costs 1 plus its children; a field with a `limit` argument (every paginated
 * list) multiplies its children by that limit (default 20), so `servers(limit: 100) { items { … } }`
 * costs about 100× the item selection.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLError, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { requestError } from '../resolvers/errors.js';
import { operationNotFound } from './operation.js';

export const MAX_DEPTH = 8;
/**
 * Introspection (`__schema`, `__type`) is measured separately: the standard introspection query of
 * GraphQL tools is 15 levels deep (nested `ofType`), so it gets its own, fixed allowance.
 */
export const MAX_INTROSPECTION_DEPTH = 20;
export const MAX_COST = 5000;
export const DEFAULT_LIST_LIMIT = 20;

const INTROSPECTION = new Set(['__schema', '__type']);
/** Flat costs of introspection root fields: ten whole-schema dumps reach MAX_COST. */
export const INTROSPECTION_COST = { schema: 500, type: 25 };

/** Depth of the chosen operation (fields nested in fields; fragments expanded), split into regular and introspection fields. */
export function queryDepths(doc: DocumentNode, operationName?: string | null): { depth: number; introspectionDepth: number } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const chosen = operationName ? ops.filter((o) => o.name?.value === operationName) : ops;
  const out = { depth: 0, introspectionDepth: 0 };
  /** Depth below `set`; `intro` once inside an introspection root field. */
  const walk = (set: SelectionSetNode, visiting: Set<string>, level: number, intro: boolean): void => {
    if (level > 1000) return;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const inIntro = intro || (level === 0 && INTROSPECTION.has(sel.name.value));
        const d = level + 1;
        if (inIntro) out.introspectionDepth = Math.max(out.introspectionDepth, d);
        else out.depth = Math.max(out.depth, d);
        if (sel.selectionSet) walk(sel.selectionSet, visiting, d, inIntro);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        walk(sel.selectionSet, visiting, level, intro);
      } else {
        const f = fragments.get(sel.name.value);
        if (!f || visiting.has(f.name.value)) continue; // cycles are a validation error anyway
        visiting.add(f.name.value);
        walk(f.selectionSet, visiting, level, intro);
        visiting.delete(f.name.value);
      }
    }
  };
  for (const op of chosen) walk(op.selectionSet, new Set(), 0, false);
  return out;
}

const estimator: ComplexityEstimator = ({ args, childComplexity, field }) => {
  // introspection answers from the schema, not the database, but a whole-schema dump is large
  // (hundreds of kB): each costs a flat amount, so aliasing it many times over is refused
  if (field.name === '__schema') return INTROSPECTION_COST.schema;
  if (field.name === '__type') return INTROSPECTION_COST.type;
  if (field.name.startsWith('__')) return 0;
  const hasLimit = field.args.some((a) => a.name === 'limit');
  if (hasLimit) {
    const limit = typeof args.limit === 'number' && args.limit > 0 ? Math.min(args.limit, 100) : DEFAULT_LIST_LIMIT;
    return 1 + childComplexity * limit;
  }
  return 1 + childComplexity;
};

export function queryCost(schema: GraphQLSchema, doc: DocumentNode, variables: Record<string, unknown> | undefined, operationName?: string | null): number {
  return getComplexity({ schema, query: doc, variables: variables ?? {}, ...(operationName ? { operationName } : {}), estimators: [estimator] });
}

/** The depth and cost checks; null when the operation is acceptable. */
export function checkLimits(
  schema: GraphQLSchema,
  doc: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName?: string | null,
  limits: { maxDepth: number; maxCost: number } = { maxDepth: MAX_DEPTH, maxCost: MAX_COST },
): GraphQLError | null {
  const { depth, introspectionDepth } = queryDepths(doc, operationName);
  if (depth > limits.maxDepth) {
    return requestError('QUERY_TOO_DEEP', `The query is ${depth} levels deep; the limit is ${limits.maxDepth}.`, { depth, maxDepth: limits.maxDepth });
  }
  if (introspectionDepth > MAX_INTROSPECTION_DEPTH) {
    return requestError('QUERY_TOO_DEEP', `The introspection query is ${introspectionDepth} levels deep; the limit is ${MAX_INTROSPECTION_DEPTH}.`, {
      depth: introspectionDepth,
      maxDepth: MAX_INTROSPECTION_DEPTH,
    });
  }
  let cost: number;
  try {
    cost = queryCost(schema, doc, variables, operationName);
  } catch {
    return null; // bad variables etc.: execution reports them with their own code
  }
  if (cost > limits.maxCost) {
    return requestError('QUERY_TOO_COMPLEX', `The query costs ${cost}; the limit is ${limits.maxCost}. Ask for fewer fields or smaller pages.`, {
      cost,
      maxCost: limits.maxCost,
    });
  }
  return null;
}

/** Accepted (operation name, variables) pairs remembered per parsed document. */
const MAX_ACCEPTED_PER_DOCUMENT = 64;

/**
 * Apollo hands out the same parsed DocumentNode for the same query text (its document store), so
 * an operation already accepted with the same operation name and variables is not walked again:
 * the verdict depends on nothing else. Rejections are recomputed (rare; a fresh error each time).
 */
export function limitsPlugin(schema: GraphQLSchema): ApolloServerPlugin {
  const accepted = new WeakMap<DocumentNode, Set<string>>();
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request, operationName, operation }) {
          const name = operationName ?? request.operationName;
          // Apollo has looked the operation up already; none found is the client's mistake (400)
          if (!operation) throw operationNotFound(request.operationName);
          if (operation.operation === 'subscription') {
            throw requestError('BAD_REQUEST', 'Subscriptions are served over WebSocket (graphql-ws, protocol graphql-transport-ws) at /graphql, not over HTTP.');
          }
          let key: string;
          try {
            key = `${name ?? ''}\u0000${JSON.stringify(request.variables ?? {})}`;
          } catch {
            key = ''; // unserialisable variables: no memo
          }
          const known = accepted.get(document);
          if (key && known?.has(key)) return;
          const err = checkLimits(schema, document, request.variables, name);
          if (err) throw err;
          if (!key) return;
          const set = known ?? new Set<string>();
          if (set.size >= MAX_ACCEPTED_PER_DOCUMENT) set.clear();
          set.add(key);
          if (!known) accepted.set(document, set);
        },
      };
    },
  };
}
