/**
 * An egg in YAML (Pelican exports eggs as YAML too) as the object the egg schema checks. The text is
 * bounded like a JSON body (1 MiB), aliases are bounded (`maxAliasCount`: no "billion laughs"), flow
 * collections (`[`, `{`) nested deeper than 64 are refused before parsing (the parser recurses on
 * them: 100 000 `{` exhaust its memory), a key given twice is an error, and an error names the line
 * and column: all 422s naming `egg`.
 */
import { Lexer, parseDocument, YAMLError } from 'yaml';
import { EggError } from './egg-errors.js';

/** As the JSON body limit (src/http/body.ts). */
export const MAX_EGG_YAML = 1024 * 1024;
/** Aliases a document may expand; an egg has none, or a few. */
const MAX_ALIASES = 100;
const MAX_FLOW_DEPTH = 64;

export function parseEggYaml(text: unknown): unknown {
  if (typeof text !== 'string' || text.trim() === '') throw new EggError({ egg: 'must be an egg in YAML' });
  if (text.length > MAX_EGG_YAML) throw new EggError({ egg: 'must be at most 1 MiB' });
  if (tooDeep(text)) throw new EggError({ egg: `is not valid YAML: flow collections ([…], {…}) nested deeper than ${MAX_FLOW_DEPTH}` });
  let value: unknown;
  try {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    if (doc.errors.length) throw doc.errors[0]!;
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    throw new EggError({ egg: `is not valid YAML: ${yamlProblem(err)}` });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new EggError({ egg: 'must be a YAML mapping (the egg\u2019s fields)' });
  return value;
}

/** Whether the lexer's tokens open more than MAX_FLOW_DEPTH flow collections at once. */
function tooDeep(text: string): boolean {
  let depth = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      if (++depth > MAX_FLOW_DEPTH) return true;
    } else if (token === ']' || token === '}') depth--;
  }
  return false;
}

function yamlProblem(err: unknown): string {
  if (err instanceof YAMLError) return err.message.split('\n')[0]!.trim();
  if (err instanceof ReferenceError) return `more than ${MAX_ALIASES} aliases are expanded (${err.message})`;
  if (err instanceof RangeError) return 'it is nested too deeply';
  throw err;
}
