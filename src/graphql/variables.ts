/**
 * Variable coercion for both transports (the HTTP executor and graphql-ws). graphql-js's own
 * coercion (`getVariableValues`) reports each problem as one sentence with the field path inside its
 * text; here the same coercion (`coerceInputValue`) reports the path as data, and every problem
 * becomes one entry of a VALIDATION_ERROR's `details.fields`, as REST reports a bad body:
 * `{ "memory": "Int cannot represent non-integer value: \"x\"", "name": "is required" }`.
 * The key is the path inside the variable (`memory`, `tasks.0.payload`), or the variable's name for
 * the variable itself. An input field the type does not define is a client bug, not a bad value:
 * it stays a GraphQL BAD_USER_INPUT error.
 */
import {
  coerceInputValue,
  getNamedType,
  getNullableType,
  GraphQLError,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  valueFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type VariableDefinitionNode,
} from 'graphql';
import { AppError } from '../errors.js';
import { graphQLErrorOf } from '../resolvers/errors.js';

export type Coerced = { values: Record<string, unknown> } | { errors: GraphQLError[] };

/** The type found at `path` inside `type` (field names and list indices); null when the path leaves it. */
function typeAt(type: GraphQLInputType, path: readonly (string | number)[]): GraphQLInputType | null {
  let t: GraphQLInputType = type;
  for (const step of path) {
    const inner = getNullableType(t);
    if (typeof step === 'number' && isListType(inner)) t = inner.ofType as GraphQLInputType;
    else if (typeof step === 'string' && isInputObjectType(inner) && inner.getFields()[step]) t = inner.getFields()[step]!.type;
    else return null;
  }
  return t;
}

interface Problems {
  fields: Record<string, string>;
  unknown: GraphQLError[];
}

/** Records one problem coerceInputValue reported at `path` about `value`. */
function record(problems: Problems, variable: string, node: VariableDefinitionNode, type: GraphQLInputType, path: readonly (string | number)[], value: unknown, error: GraphQLError): void {
  const key = (p: readonly (string | number)[]) => (p.length ? p.join('.') : variable);
  const at = typeAt(type, path);
  const object = at ? getNullableType(at) : null;
  if (object && isInputObjectType(object) && value && typeof value === 'object' && !Array.isArray(value)) {
    // an object's own problems: required fields it lacks, or fields its type does not define
    const given = value as Record<string, unknown>;
    const fields = object.getFields();
    const missing = Object.values(fields).filter((f) => isNonNullType(f.type) && f.defaultValue === undefined && given[f.name] === undefined);
    for (const f of missing) problems.fields[key([...path, f.name])] ??= 'is required';
    if (missing.length) return;
    if (Object.keys(given).some((name) => !fields[name])) {
      problems.unknown.push(new GraphQLError(`Variable "$${variable}": ${error.message}`, { nodes: node, extensions: { code: 'BAD_USER_INPUT' } }));
      return;
    }
  }
  problems.fields[key(path)] ??= error.message.replace(/\.$/, '');
}

/** Coerces `inputs` for the operation's variable definitions; the problems as GraphQL errors otherwise. */
export function coerceVariables(schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[], inputs: Record<string, unknown>): Coerced {
  const problems: Problems = { fields: {}, unknown: [] };
  const values: Record<string, unknown> = {};
  for (const def of definitions) {
    const name = def.variable.name.value;
    const type = typeFromAST(schema, def.type) as GraphQLInputType | undefined;
    // an unknown or non-input type is a validation error, reported before this runs
    if (!type || !getNamedType(type)) continue;
    const given = Object.prototype.hasOwnProperty.call(inputs, name);
    if (!given || inputs[name] === null) {
      if (!given && def.defaultValue) values[name] = valueFromAST(def.defaultValue, type);
      else if (isNonNullType(type)) problems.fields[name] ??= 'is required';
      else if (given) values[name] = null;
      continue;
    }
    values[name] = coerceInputValue(inputs[name], type, (path, value, error) => record(problems, name, def, type, path, value, error));
  }
  if (problems.unknown.length) return { errors: problems.unknown };
  if (Object.keys(problems.fields).length) return { errors: [graphQLErrorOf(AppError.validation(problems.fields), 400)] };
  return { values };
}
