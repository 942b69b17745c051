/**
 * An egg's `scripts.installation` as the blueprint's install script: the script's text as the egg has
 * it (Windows line ends made Unix ones, as Wings does) and its entrypoint as `installShell`. The agent
 * runs it on the node as the server's own user (never root, no container), with /mnt/server and
 * /home/container mapped to the server's directory. The import warns about the programs the script
 * calls that this machine lacks: nodes run the script with what is installed on them.
 */
import type { InstallShell } from '../shared/node-protocol.js';
import { findExecutable } from '../shared/executables.js';
import type { ImportWarning } from './egg-errors.js';
import type { Egg } from './egg-schema.js';

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Missing programs named in the warnings at most (a script full of them says enough with these). */
const MAX_MISSING = 20;

export interface MappedInstall {
  install: string | null;
  installShell: InstallShell | null;
}

export function mapInstall(egg: Egg, warnings: ImportWarning[]): MappedInstall {
  const installation = egg.scripts?.installation;
  const script = installation?.script?.replace(/\r\n/g, '\n') ?? '';
  if (!script.trim()) return { install: null, installShell: null };
  const installShell = shellOf(installation?.entrypoint ?? null, warnings);
  warnings.push({
    field: 'scripts.installation',
    message: `the install script runs on the node as the server's own user with ${installShell}, not as root in ${installation?.container ?? 'a container'}: the image is not used, so the programs the script needs must be installed on the nodes`,
  });
  for (const program of missingPrograms(script)) {
    warnings.push({ field: 'scripts.installation.script', message: `the script calls ${program}, which this machine lacks; install it on the nodes that run this blueprint` });
  }
  return { install: script, installShell };
}

/** `bash`, `ash` and `sh` (also as `/bin/bash`…) are kept; anything else runs with bash, with a warning. */
function shellOf(entrypoint: string | null, warnings: ImportWarning[]): InstallShell {
  const name = (entrypoint ?? '').trim().split('/').pop() ?? '';
  if (name === 'bash' || name === 'ash' || name === 'sh') return name;
  if (name === '') return 'ash'; // Pterodactyl's default entrypoint
  warnings.push({ field: 'scripts.installation.entrypoint', message: `the entrypoint "${entrypoint}" is not supported: the script runs with bash` });
  return 'bash';
}

/** The programs `script` calls (see commandWords) that are not on this machine's PATH, in order. */
export function missingPrograms(script: string, pathVar = process.env.PATH || DEFAULT_PATH): string[] {
  const defined = new Set([...script.matchAll(/^\s*(?:function\s+([A-Za-z_][\w-]*)|([A-Za-z_][\w-]*)\s*\(\s*\))/gm)].map((m) => (m[1] ?? m[2])!));
  const missing = commandWords(script).filter((w) => !defined.has(w) && !SHELL_WORDS.has(w) && findExecutable(w, pathVar) === null);
  return [...new Set(missing)].slice(0, MAX_MISSING);
}

/**
 * A simple scan, not a shell parser: the first word of each command (at a line's start, after `|`,
 * `&&`, `||`, `;`, `$(`, a backtick, or a keyword such as `then`), skipping comments, here-documents'
 * text, quoted text (but not a `$( )` inside double quotes), `${…}` expansions and variable
 * assignments. Words with `$` or `/` (paths, expansions) and numbers are not program names.
 */
export function commandWords(script: string): string[] {
  const code = withoutQuotedText(codeLines(script).join('\n')).replace(/\$\{[^}]*\}/g, '_');
  const words: string[] = [];
  for (const line of code.split('\n')) {
    for (const part of line.split(/\|\||&&|[|;&`(){}]|\$\(/)) {
      const word = firstCommand(part.trim().split(/\s+/));
      if (word) words.push(word);
    }
  }
  return words;
}

/** Lines without comments and here-documents, continuation lines joined. */
function codeLines(script: string): string[] {
  const lines = script.replace(/\\\n/g, ' ').split('\n');
  const out: string[] = [];
  let heredocEnd: string | null = null;
  for (const line of lines) {
    if (heredocEnd !== null) {
      if (line.trim() === heredocEnd) heredocEnd = null;
      continue;
    }
    if (/^\s*#/.test(line)) continue;
    out.push(line.replace(/\s#[^"'`]*$/, ''));
    const heredoc = /<<-?\s*['"]?([A-Za-z_]\w*)['"]?/.exec(line);
    if (heredoc) heredocEnd = heredoc[1]!;
  }
  return out;
}

/** `'…'` becomes `''`; `"…"` becomes the `$( )` it holds (joined by `;`), else `""`. */
function withoutQuotedText(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\') {
      out += ' ';
      i += 2;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      i = end < 0 ? s.length : end + 1;
      out += "''";
    } else if (c === '"') {
      let j = i + 1;
      let inner = '';
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === '\\') j++;
        else inner += s[j];
      }
      i = j + 1;
      out += inner.match(/\$\([^)]*\)/g)?.join(';') ?? '""';
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const PREFIXES = new Set(['then', 'do', 'else', 'if', 'elif', 'while', 'until', '!', 'time', 'exec', 'sudo', 'env', 'nohup', 'command', 'builtin']);

function firstCommand(tokens: string[]): string | null {
  for (const token of tokens) {
    if (token === '' || PREFIXES.has(token) || /^[A-Za-z_]\w*(\[[^\]]*\])?\+?=/.test(token)) continue;
    return /^[A-Za-z0-9][\w.+-]*$/.test(token) && !/^\d+$/.test(token) ? token : null;
  }
  return null;
}

/** Shell keywords and builtins: never programs to look for. */
const SHELL_WORDS = new Set(
  (
    'if then else elif fi for while until do done case esac in function select time return exit export local declare typeset ' +
    'readonly unset set shift source cd pwd echo printf read test true false eval exec trap wait let break continue alias type ' +
    'command hash ulimit umask getopts shopt pushd popd dirs builtin enable help history jobs fg bg kill disown suspend logout ' +
    'mapfile readarray compgen complete'
  ).split(' '),
);
