/**
 * Executes HTTP GraphQL operations with graphql-jit instead of graphql-js's interpreter.
 *
 * Apollo Server parses, validates and runs the plugins as usual; only the execution step is swapped,
 * through Apollo's documented `gateway` interface (a gateway that never changes its schema and whose
 * executor runs the compiled operation). Each operation is compiled once per parsed document and
 * operation name: Apollo's document store hands out the same DocumentNode for the same query text,
 * so the cache is a WeakMap on it and goes away with the store's entry.
 *
 * Resolvers, scalars, errors (`originalError` kept, so formatGraphQLError maps AppError codes the
 * same way) and variable coercion are the schema's own; graphql-jit only generates the code that
 * walks the selection set. Subscriptions stay on graphql-js (src/graphql/shared-subscribe.ts).
 */
import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { coerceVariables } from './variables.js';

/** Operations remembered per document (one per operation name actually used). */
const MAX_OPERATIONS_PER_DOCUMENT = 16;

export function jitExecutor(schema: GraphQLSchema): GatewayExecutor {
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | ExecutionResult>>();

  const compile = (document: DocumentNode, operationName: string | null): CompiledQuery | ExecutionResult => {
    const key = operationName ?? '';
    let byName = compiled.get(document);
    const known = byName?.get(key);
    if (known) return known;
    const fresh = compileQuery(schema, document, operationName ?? undefined, { disablingCapturingStackErrors: true });
    if (!byName) compiled.set(document, (byName = new Map()));
    if (byName.size >= MAX_OPERATIONS_PER_DOCUMENT) byName.clear();
    byName.set(key, fresh);
    return fresh;
  };

  return async (ctx) => {
    // variables are checked first, the same way as over WebSocket: a bad value is a VALIDATION_ERROR
    // naming the field (HTTP 400)
    const inputs = ctx.request.variables ?? {};
    if (ctx.operation.variableDefinitions?.length) {
      const coerced = coerceVariables(schema, ctx.operation.variableDefinitions, inputs);
      if ('errors' in coerced) return { errors: coerced.errors };
    }
    const op = compile(ctx.document, ctx.operationName);
    const result = isCompiledQuery(op) ? await op.query(undefined, ctx.context, inputs) : op;
    return result.errors ? { ...result, errors: result.errors.map(asGraphQLError) } : result;
  };
}

/**
 * graphql-jit's errors are GraphQLError-like objects without graphql-js's invariants (`extensions`
 * may be undefined, which Apollo's error normalisation does not survive): rebuild them as real
 * GraphQLErrors with the same message, path, locations, extensions and original error.
 */
function asGraphQLError(e: GraphQLError): GraphQLError {
  const out = new GraphQLError(e.message, { path: e.path, originalError: e.originalError ?? undefined, extensions: e.extensions ?? undefined });
  if (e.locations) Object.defineProperty(out, 'locations', { value: e.locations, enumerable: true });
  return out;
}

/** A fixed-schema Apollo "gateway" whose executor is {@link jitExecutor}. */
export function jitGateway(schema: GraphQLSchema): GatewayInterface {
  return {
    async load() {
      return { executor: jitExecutor(schema) };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    async stop() {},
  };
}
