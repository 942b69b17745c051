/**
 * An egg in YAML (Pelican exports eggs as YAML too) as the object the egg schema checks. The text is
 * bounded like a JSON body (1 MiB of UTF-8), aliases are bounded (`maxAliasCount`: no "billion laughs"), flow
 * collections (`[`, `{`) nested deeper than 64 are refused before parsing (the parser recurses on
 * them: 100 000 `{` exhaust its memory), so are texts of more than 20,000 tokens (the largest egg we
 * know has about 1,300; the parser takes tens of microseconds a token, on the panel's event loop), a
 * key given twice is an error (found in one pass: src/shared/yaml-keys.ts), and an error names the
 * line and column: all 422s naming `egg`.
 */
import { Lexer, LineCounter, parseDocument, YAMLError } from 'yaml';
import { repeatedKey, type RepeatedKey } from '../shared/yaml-keys.js';
import { EggError } from './egg-errors.js';

/** As the JSON body limit (src/http/body.ts). */
export const MAX_EGG_YAML = 1024 * 1024;
/** Aliases a document may expand; an egg has none, or a few. */
const MAX_ALIASES = 100;
const MAX_FLOW_DEPTH = 64;
export const MAX_EGG_TOKENS = 20_000;

export function parseEggYaml(text: unknown): unknown {
  if (typeof text !== 'string' || text.trim() === '') throw new EggError({ egg: 'must be an egg in YAML' });
  if (Buffer.byteLength(text) > MAX_EGG_YAML) throw new EggError({ egg: 'must be at most 1 MiB' });
  const shape = lexedShape(text);
  if (shape === 'deep') throw new EggError({ egg: `is not valid YAML: flow collections ([…], {…}) nested deeper than ${MAX_FLOW_DEPTH}` });
  if (shape === 'long') throw new EggError({ egg: `has more than ${MAX_EGG_TOKENS.toLocaleString('en')} YAML tokens (keys, values, punctuation): an egg has a few thousand at most; check that this is the egg's file` });
  const lineCounter = new LineCounter();
  let value: unknown;
  try {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter });
    if (doc.errors.length) throw doc.errors[0]!;
    const twice = repeatedKey(doc);
    if (twice) return refuseRepeated(lineCounter, twice);
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    throw new EggError({ egg: `is not valid YAML: ${yamlProblem(err)}` });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new EggError({ egg: 'must be a YAML mapping (the egg\u2019s fields)' });
  return value;
}

/** 'deep' when the lexer's tokens open more than MAX_FLOW_DEPTH flow collections at once, 'long' past MAX_EGG_TOKENS tokens. */
function lexedShape(text: string): 'deep' | 'long' | 'ok' {
  let depth = 0;
  let tokens = 0;
  for (const token of new Lexer().lex(text)) {
    if (++tokens > MAX_EGG_TOKENS) return 'long';
    if (token === '[' || token === '{') {
      if (++depth > MAX_FLOW_DEPTH) return 'deep';
    } else if (token === ']' || token === '}') depth--;
  }
  return 'ok';
}

function refuseRepeated(lines: LineCounter, twice: RepeatedKey): never {
  const at = twice.offset === null ? '' : ` at line ${lines.linePos(twice.offset).line}, column ${lines.linePos(twice.offset).col}`;
  throw new EggError({ egg: `is not valid YAML: Map keys must be unique${at} (the key ${twice.key} appears twice)` });
}

function yamlProblem(err: unknown): string {
  if (err instanceof EggError) throw err;
  if (err instanceof YAMLError) return err.message.split('\n')[0]!.trim();
  if (err instanceof ReferenceError) return `more than ${MAX_ALIASES} aliases are expanded (${err.message})`;
  if (err instanceof RangeError) return 'it is nested too deeply';
  throw err;
}
