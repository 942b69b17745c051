/**
 * The plant store in GraphQL. Plant ids are int64: GraphQL's Int is 32-bit and JSON
 * numbers above 2^53 lose digits, so ids travel as the `Int64` scalar: a decimal string in results
 * and variables (`"9223372036854775807"`); an integer literal written in the query text is read exactly too.
 */
import { GraphQLScalarType, Kind } from 'graphql';
import { Field, ObjectType } from 'type-graphql';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL = /^-?(0|[1-9][0-9]*)$/;

function toInt64(v: unknown): string {
  let s: string;
  if (typeof v === 'string') s = v.trim();
  else if (typeof v === 'number' && Number.isSafeInteger(v)) s = String(v);
  else if (typeof v === 'bigint') s = v.toString();
  else throw new TypeError('Int64 must be a decimal integer string such as "9007199254740993" (numbers above 2^53 lose digits in JSON).');
  if (!DECIMAL.test(s)) throw new TypeError(`Int64 must be a decimal integer, got ${JSON.stringify(s).slice(0, 40)}.`);
  const n = BigInt(s);
  if (n < INT64_MIN || n > INT64_MAX) throw new TypeError(`Int64 must be between ${INT64_MIN} and ${INT64_MAX}.`);
  return n.toString();
}

export const Int64Scalar = new GraphQLScalarType<string, string>({
  name: 'Int64',
  description: 'A signed 64-bit integer, kept exactly: a decimal string in JSON (an integer literal is accepted in the query text).',
  serialize: (v) => toInt64(v),
  parseValue: (v) => toInt64(v),
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.STRING) return toInt64(ast.value);
    throw new TypeError('Int64 must be an integer literal or a decimal string.');
  },
});

@ObjectType('Plant', { simpleResolvers: true, description: 'A plant of the sample store. `tag` is null when the plant has none.' })
export class PlantType {
  @Field(() => Int64Scalar)
  id!: string;

  @Field()
  name!: string;

  @Field(() => String, { nullable: true })
  tag?: string | null;
}
