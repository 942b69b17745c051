/** Builds the executable schema from the type-graphql classes (no class-validator: the services validate with zod). */
import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
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
  return (built ??= buildSchema({ resolvers: [...RESOLVERS], validate: false, emitSchemaFile: false, pubSub: NO_TOPICS }).then(passThroughSubscriptions));
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

/** The SDL committed as /schema.graphql (sorted, so that the order of declarations does not matter). */
export function printGraphQLSchema(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
