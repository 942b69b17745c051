/** Builds the executable schema from the type-graphql classes (no class-validator: the services validate with zod). */
import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { RESOLVERS } from '../resolvers/index.js';

let built: Promise<GraphQLSchema> | null = null;

/** The schema (built once per process: type-graphql's metadata is global anyway). */
export function buildGraphQLSchema(): Promise<GraphQLSchema> {
  return (built ??= buildSchema({ resolvers: [...RESOLVERS], validate: false, emitSchemaFile: false }));
}

/** The SDL committed as /schema.graphql (sorted, so that the order of declarations does not matter). */
export function printGraphQLSchema(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
