/**
 * GRAPHQL_INTROSPECTION off: one validation rule, used over HTTP (Apollo) and WebSocket, refuses
 * `__schema` and `__type` with a message that tells the operator which setting turns it on.
 * (`__typename` stays allowed: clients use it for ordinary results.)
 */
import { GraphQLError, type ValidationRule } from 'graphql';

export const noIntrospection: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === '__schema' || node.name.value === '__type') {
      context.reportError(
        new GraphQLError(
          `GraphQL introspection is turned off on this panel (the query asked for ${node.name.value}). An operator can turn it on with GRAPHQL_INTROSPECTION=true; the schema is also in the project's schema.graphql.`,
          { nodes: node },
        ),
      );
    }
  },
});

/** The extra validation rules for the introspection setting. */
export function introspectionRules(enabled: boolean): ValidationRule[] {
  return enabled ? [] : [noIntrospection];
}
