/**
 * Startup command templates.
 *
 * A template such as `{{NODE}} ./{{SCRIPT}} --motd {{MOTD}}` is first split into argv words (whitespace
 * separates words; '…' and "…" group words, a backslash escapes the next character; this quoting
 * belongs to the blueprint author's template only). Only THEN is each `{{VAR}}` replaced inside its own
 * word, so a value can never add arguments, quotes or shell syntax: `MOTD="a b; rm -rf /"` stays one
 * argv element. The result is spawned without a shell.
 */

export class TemplateError extends Error {}

/** Splits a template into words. Throws on an unterminated quote. */
export function splitTemplate(template: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < template.length; i++) {
    const ch = template[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < template.length && /["\\]/.test(template[i + 1]!)) cur += template[++i];
      else cur += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < template.length) {
      cur += template[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (quote) throw new TemplateError('unterminated quote in startup command');
  if (inWord) words.push(cur);
  return words;
}

const VAR_RE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Replaces `{{VAR}}` in one word. Unknown variables become the empty string. */
export function substituteWord(word: string, vars: Record<string, string>): string {
  return word.replace(VAR_RE, (_m, name: string) => (Object.prototype.hasOwnProperty.call(vars, name) ? vars[name]! : ''));
}

/** Variable names referenced by a template (for validation / docs). */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(VAR_RE)].map((m) => m[1]!))];
}

/** Template → argv. Throws TemplateError when the result is empty. */
export function buildArgv(template: string, vars: Record<string, string>): string[] {
  const argv = splitTemplate(template).map((w) => substituteWord(w, vars));
  if (argv.length === 0 || !argv[0]) throw new TemplateError('startup command is empty');
  return argv;
}
