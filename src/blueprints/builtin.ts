/**
 * Built-in blueprints, seeded into the panel's database. All of them run on any machine that has
 * Node.js (and /bin/sh): no game download needed.
 *
 * Template language (executed by the node agent, see src/agent/environment/template.ts):
 *   - `startup` is split into argv words first (whitespace; '…'/"…" quoting is for the blueprint
 *     author only), then each `{{VAR}}` is replaced inside its own word, so user values can never add
 *     arguments or shell syntax. Spawned without a shell.
 *   - Built-ins: `{{NODE}}` (node executable), `{{ASSETS_DIR}}` (a readable copy of the repo's assets/ in DATA_DIR/agent/assets), `{{SERVER_ID}}`,
 *     `{{SERVER_DIR}}`, `{{SERVER_MEMORY}}`, `{{SERVER_CPU}}`, `{{SERVER_DISK}}`; plus every variable below.
 *   - `stop`: a line written to stdin (e.g. `stop`) or a signal: `SIGTERM`, `SIGINT`, `^C` (SIGINT), `^D` (close stdin).
 *   - `ready`: a regular expression; the server becomes `running` when an output line matches it
 *     (`null`: running at once).
 *   - `install`: a `/bin/sh` script run once in the server directory; variables are given to it ONLY
 *     as environment variables (`"$MOTD"`), never pasted into its text.
 *
 * Variable rules: a `|`-separated list (Laravel/Pterodactyl style), see src/blueprints/rules.ts.
 */
export { validateVariable } from './rules.js';

export interface BlueprintVariable {
  key: string;
  description: string;
  default: string;
  rules: string;
}

export interface BlueprintDefinition {
  /** stable slug; the panel uses it to upsert its seeded copy */
  key: string;
  name: string;
  description: string;
  startup: string;
  stop: string;
  ready: string | null;
  install: string | null;
  variables: BlueprintVariable[];
  /** memory and disk in MiB, cpu in percent of one core */
  defaults: { memory: number; cpu: number; disk: number };
  /**
   * The server runs a command its user chooses (not a fixed program): whoever creates one runs
   * arbitrary code on the node. `USER_COMMAND_BLUEPRINTS=admins` keeps these to administrators.
   */
  runsUserCommand?: boolean;
}

const NODE_RUNNER_DEFAULT_SCRIPT = `// Written by the HostPanel "Node.js script" blueprint install step. Replace it with your own code.
const readline = require('node:readline');
console.log('Hello from the Node.js script runner (node ' + process.version + ')');
console.log('Ready. Type something and it will be echoed back.');
readline.createInterface({ input: process.stdin }).on('line', (line) => console.log('echo: ' + line));
process.on('SIGTERM', () => { console.log('Got SIGTERM, bye'); process.exit(0); });
setInterval(() => {}, 1 << 30);
`;

export const BUILTIN_BLUEPRINTS: BlueprintDefinition[] = [
  {
    key: 'demo-game',
    name: 'Demo game server',
    description:
      'A small simulated game server (a Node.js script shipped with HostPanel): startup log, a "Done" ready line, and the commands help, say <text>, list, tps, seed and stop.',
    startup: '{{NODE}} {{ASSETS_DIR}}/demo-game.js --motd {{MOTD}} --max-players {{MAX_PLAYERS}} --port {{SERVER_PORT}}',
    stop: 'stop',
    ready: 'Done \\([0-9.]+s\\)! For help, type "help"',
    install: [
      'set -e',
      'echo "Installing the demo game server into $PWD"',
      'printf "motd=%s\\nmax-players=%s\\nserver-port=%s\\n" "$MOTD" "$MAX_PLAYERS" "$SERVER_PORT" > server.properties',
      'echo "eula=true" > eula.txt',
      'mkdir -p world',
      'echo "Wrote server.properties, eula.txt and world/"',
    ].join('\n'),
    variables: [
      { key: 'MOTD', description: 'Message of the day shown at startup', default: 'A HostPanel demo server', rules: 'required|string|max:64' },
      { key: 'MAX_PLAYERS', description: 'Maximum number of players', default: '20', rules: 'required|integer|between:1,1000' },
      { key: 'SERVER_PORT', description: 'Port the game announces (the demo does not open it)', default: '25565', rules: 'required|integer|between:1024,65535' },
    ],
    defaults: { memory: 256, cpu: 100, disk: 512 },
  },
  {
    key: 'nodejs-script',
    name: 'Node.js script',
    description:
      'Runs a JavaScript file from the server directory with Node.js. The install step writes a small example script when the file does not exist yet; stopped with SIGTERM.',
    // `./` keeps the file name from ever being read as a node option (e.g. "--eval=...").
    startup: '{{NODE}} ./{{SCRIPT_FILE}}',
    stop: 'SIGTERM',
    ready: null,
    install: [
      'set -e',
      'mkdir -p "$(dirname "./$SCRIPT_FILE")"',
      'if [ -f "./$SCRIPT_FILE" ]; then',
      '  echo "Keeping existing $SCRIPT_FILE"',
      'else',
      '  echo "Writing example script $SCRIPT_FILE"',
      `  cat > "./$SCRIPT_FILE" <<'HOSTPANEL_EOF'\n${NODE_RUNNER_DEFAULT_SCRIPT}HOSTPANEL_EOF`,
      'fi',
    ].join('\n'),
    variables: [
      {
        key: 'SCRIPT_FILE',
        description: 'Script to run, relative to the server directory',
        default: 'index.js',
        rules: 'required|string|max:128|regex:/^[A-Za-z0-9_][A-Za-z0-9_.\\/-]*\\.(js|cjs|mjs)$/',
      },
    ],
    defaults: { memory: 256, cpu: 100, disk: 256 },
  },
  {
    key: 'shell-command',
    name: 'Shell command',
    description:
      'Runs your own shell command with /bin/sh in the server directory (your server, your command). Output appears in the console, console input goes to the command\'s stdin; stopped with SIGTERM.',
    startup: '/bin/sh -c {{COMMAND}}',
    stop: 'SIGTERM',
    ready: null,
    install: null,
    variables: [
      {
        key: 'COMMAND',
        description: 'The shell command line to run',
        default: 'echo "Shell server ready"; while IFS= read -r line; do echo "> $line"; done',
        rules: 'required|string|max:4096',
      },
    ],
    defaults: { memory: 128, cpu: 100, disk: 256 },
    runsUserCommand: true,
  },
];

const USER_COMMAND_KEYS = new Set(BUILTIN_BLUEPRINTS.filter((d) => d.runsUserCommand).map((d) => d.key));

/** True for a seeded built-in blueprint that runs a command chosen by the server's user. */
export function runsUserCommand(blueprint: { key: string; builtin: boolean }): boolean {
  return blueprint.builtin && USER_COMMAND_KEYS.has(blueprint.key);
}

/** Default variable values of a blueprint merged with the user's (user values win). */
export function mergeVariables(bp: BlueprintDefinition, values: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of bp.variables) out[v.key] = Object.prototype.hasOwnProperty.call(values, v.key) ? String(values[v.key]) : v.default;
  return out;
}
