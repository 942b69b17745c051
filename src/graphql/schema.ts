/** Builds the executable schema from the type-graphql classes (no class-validator: the services validate with zod). */
import 'reflect-metadata';
import { isObjectType, lexicographicSortSchema, printSchema, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { buildSchema, getMetadataStorage } from 'type-graphql';
import { RESOLVERS } from '../resolvers/index.js';

let built: Promise<GraphQLSchema> | null = null;

/**
 * Our subscriptions bring their own event sources (`subscribe` on each @Subscription, fed by the
 * console hub), so type-graphql's topic-based PubSub is never used; it only insists on having one.
 */
const NO_TOPICS = {
  publish: () => undefined,
  subscribe: (): AsyncIterable<never> => {
    throw new Error('topic subscriptions are not used: every @Subscription has its own subscribe()');
  },
};

/**
 * The schema (built once per process: type-graphql's metadata is global anyway). Every object type in
 * src/schema is declared with `simpleResolvers: true`, so plain fields are read by graphql-js's
 * default resolver instead of a type-graphql wrapper per field (which allocates per call and runs
 * a middleware stack). No field here uses middlewares or @Authorized; authorization lives in the
 * services and field resolvers. Give a type back its wrappers before adding either.
 */
export function buildGraphQLSchema(): Promise<GraphQLSchema> {
  return (built ??= buildSchema({ resolvers: [...RESOLVERS], validate: false, emitSchemaFile: false, pubSub: NO_TOPICS }).then(passThroughSubscriptions).then(directFieldResolvers));
}

/**
 * Every subscription field yields its event as its value (see src/resolvers/console.resolver.ts).
 * Events are resolved once per subscriber, so the root resolver is the hot path of console fan-out:
 * it is replaced by the identity instead of type-graphql's generic per-call wrapper.
 */
function passThroughSubscriptions(schema: GraphQLSchema): GraphQLSchema {
  const type = schema.getSubscriptionType();
  for (const field of Object.values(type?.getFields() ?? {})) field.resolve = (payload: unknown) => payload;
  return schema;
}

type ResolverMethod = (...params: unknown[]) => unknown;
type ParamGetter = (root: unknown, context: unknown, info: GraphQLResolveInfo) => unknown;

/**
 * Field resolvers (`@FieldResolver` methods such as `Server.owner`) run once per field per list item,
 * so their wrapper is on a hot path: type-graphql's sorts the method's parameter list on every call
 * (an array copy each time: 12% of all allocation on a GraphQL page in the benchmark's heap profile)
 * and builds the values with `map`. Where a method takes only `@Root()` (untyped), `@Ctx()` and
 * `@Info()`, and has no middlewares or roles, it is called directly with its parameters in order.
 * Anything else (arguments, typed roots, middlewares, @Authorized) keeps type-graphql's wrapper.
 * buildSchema is given no `globalMiddlewares` and no container; adding either means dropping this step.
 */
function directFieldResolvers(schema: GraphQLSchema): GraphQLSchema {
  const storage = getMetadataStorage();
  const instances = new Map<object, Record<string, ResolverMethod>>();
  for (const meta of storage.fieldResolvers) {
    const params = [...(meta.params ?? [])].sort((a, b) => a.index - b.index);
    const getters = params.map((p, i): ParamGetter | null => {
      if (p.index !== i) return null;
      if (p.kind === 'root') return p.getType || p.propertyName ? null : (root) => root;
      if (p.kind === 'context') return p.propertyName ? (_root, context) => (context as Record<string, unknown>)[p.propertyName!] : (_root, context) => context;
      if (p.kind === 'info') return (_root, _context, info) => info;
      return null;
    });
    const className = storage.objectTypes.find((o) => o.target === meta.getObjectType?.())?.name;
    const type = className ? schema.getType(className) : undefined;
    const field = isObjectType(type) ? type.getFields()[meta.schemaName] : undefined;
    if (meta.kind !== 'external' || meta.middlewares?.length || meta.roles || getters.includes(null) || !field) continue;
    let instance = instances.get(meta.target);
    if (!instance) instances.set(meta.target, (instance = new (meta.target as new () => Record<string, ResolverMethod>)()));
    const method = instance[meta.methodName]!.bind(instance);
    const get = getters as ParamGetter[];
    field.resolve = (root, _args, context, info) => method(...get.map((g) => g(root, context, info)));
  }
  return schema;
}

/** The SDL committed as /schema.graphql (sorted, so that the order of declarations does not matter). */
export function printGraphQLSchema(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
