/**
 * Blueprint variable rules: a small, Laravel-like rule language, rules separated by `|`:
 *
 *   required            the value must not be empty
 *   nullable            an empty value is fine (the default when `required` is absent)
 *   string              any string (the default)
 *   integer | numeric   a base-10 integer / a decimal number
 *   boolean             true, false, 1 or 0
 *   alpha_num           letters and digits only;  alpha_dash: letters, digits, `-` and `_`
 *   min:N | max:N       length for strings, value for integer/numeric
 *   between:A,B         min:A and max:B
 *   in:a,b,c            one of the listed values
 *   port                an integer from 1 to 65535
 *   regex:PATTERN       the whole value must match PATTERN; it takes the rest of the rule string,
 *                       so it must come last (PATTERN may contain `|`)
 *
 * Unknown rules are ignored (a newer blueprint must not make old panels refuse every server).
 * An empty value is accepted unless `required` is given.
 */

export interface ParsedRule {
  name: string;
  args: string[];
}

export function parseRules(rules: string): ParsedRule[] {
  const out: ParsedRule[] = [];
  let rest = (rules ?? '').trim();
  while (rest.length) {
    if (rest.startsWith('regex:')) {
      out.push({ name: 'regex', args: [rest.slice('regex:'.length)] });
      break;
    }
    const bar = rest.indexOf('|');
    const part = (bar < 0 ? rest : rest.slice(0, bar)).trim();
    rest = bar < 0 ? '' : rest.slice(bar + 1).trim();
    if (!part) continue;
    const colon = part.indexOf(':');
    const name = (colon < 0 ? part : part.slice(0, colon)).trim().toLowerCase();
    const args = colon < 0 ? [] : part.slice(colon + 1).split(',').map((a) => a.trim());
    out.push({ name, args });
  }
  return out;
}

const INTEGER = /^[+-]?\d+$/;
const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Checks one value; returns an error message, or null when the value follows the rules. */
export function checkVariable(value: string, rules: string): string | null {
  const parsed = parseRules(rules);
  const has = (n: string) => parsed.some((r) => r.name === n);
  if (value === '') return has('required') ? 'is required' : null;
  const numeric = has('integer') || has('numeric') || has('port');
  const size = (v: string) => (numeric ? Number(v) : [...v].length);
  const unit = numeric ? '' : ' characters';
  for (const r of parsed) {
    const n = Number(r.args[0]);
    const m = Number(r.args[1]);
    switch (r.name) {
      case 'integer':
        if (!INTEGER.test(value)) return 'must be an integer';
        break;
      case 'numeric':
        if (!NUMERIC.test(value)) return 'must be a number';
        break;
      case 'port':
        if (!INTEGER.test(value) || Number(value) < 1 || Number(value) > 65535) return 'must be a port number from 1 to 65535';
        break;
      case 'boolean':
        if (!['true', 'false', '1', '0'].includes(value)) return 'must be true, false, 1 or 0';
        break;
      case 'alpha_num':
        if (!/^[\p{L}\p{N}]+$/u.test(value)) return 'must contain only letters and digits';
        break;
      case 'alpha_dash':
        if (!/^[\p{L}\p{N}_-]+$/u.test(value)) return 'must contain only letters, digits, dashes and underscores';
        break;
      case 'min':
        if (Number.isFinite(n) && size(value) < n) return numeric ? `must be at least ${n}` : `must be at least ${n}${unit}`;
        break;
      case 'max':
        if (Number.isFinite(n) && size(value) > n) return numeric ? `must be at most ${n}` : `must be at most ${n}${unit}`;
        break;
      case 'between':
        if (Number.isFinite(n) && Number.isFinite(m) && (size(value) < n || size(value) > m)) return `must be between ${n} and ${m}${unit}`;
        break;
      case 'in':
        if (!r.args.includes(value)) return `must be one of: ${r.args.join(', ')}`;
        break;
      case 'regex': {
        let re: RegExp;
        try {
          const src = r.args[0] ?? '';
          // Accept both `^[a-z]+$` and the delimited `/^[a-z]+$/i` form.
          const delimited = /^\/(.*)\/([a-z]*)$/s.exec(src);
          re = delimited ? new RegExp(delimited[1]!, delimited[2]!.replace(/[^imsu]/g, '')) : new RegExp(src);
        } catch {
          break; // a broken pattern in a blueprint is the blueprint's bug, not the user's
        }
        if (!re.test(value)) return 'has an invalid format';
        break;
      }
      default:
        break; // required, nullable, string and unknown rules
    }
  }
  return null;
}
