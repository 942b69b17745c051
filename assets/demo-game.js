#!/usr/bin/env node
/*
 * HostPanel demo game server: a plain Node.js script (no dependencies) that behaves like a small game
 * server so that the panel can be tried without downloading a real game.
 *
 * Options: --motd <text>  --max-players <n>  --port <n>  (or env MOTD, MAX_PLAYERS, SERVER_PORT)
 *
 * Console commands:  help | say <text> | list | tps | seed | stop
 * Test-only commands (used by the automated tests, harmless otherwise):
 *   crash [code]      exit at once with that code (default 1), as a crash would
 *   eat <MiB>         allocate and hold that much memory (to trip the memory limit)
 *   spam <n> [len]    print n lines as fast as possible (optionally each about len characters); each
 *                     line ends with ` #<k>`, k counting every spam line this process printed, so
 *                     that a reader can tell a skipped line from one that was never printed
 */
'use strict';

const readline = require('node:readline');

function arg(name, envName, def) {
  const i = process.argv.indexOf(name);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  if (envName && process.env[envName]) return process.env[envName];
  return def;
}

const motd = arg('--motd', 'MOTD', 'A HostPanel demo server');
const maxPlayers = Math.max(1, parseInt(arg('--max-players', 'MAX_PLAYERS', '20'), 10) || 20);
const port = parseInt(arg('--port', 'SERVER_PORT', '25565'), 10) || 25565;
const memory = process.env.SERVER_MEMORY || '?';
const startedAt = Date.now();
const hogs = [];
let ready = false;
let stopping = false;
let spamPrinted = 0;

const ts = () => new Date().toTimeString().slice(0, 8);
const info = (msg) => process.stdout.write(`[${ts()} INFO]: ${msg}\n`);
const warn = (msg) => process.stdout.write(`[${ts()} WARN]: ${msg}\n`);

const boot = [
  [0, () => info('Starting HostPanel demo server version 1.4.2')],
  [60, () => info('Loading properties')],
  [120, () => info('Default game type: SURVIVAL')],
  [180, () => info(`Memory available to the server: ${memory} MiB`)],
  [240, () => info(`Starting server on *:${port}`)],
  [300, () => info(`Message of the day: ${motd}`)],
  [360, () => info('Preparing level "world"')],
  [420, () => info('Preparing start region for dimension overworld')],
  [480, () => info('Preparing spawn area: 0%')],
  [560, () => info('Preparing spawn area: 47%')],
  [640, () => info('Preparing spawn area: 100%')],
  [
    700,
    () => {
      ready = true;
      info(`Done (${((Date.now() - startedAt) / 1000).toFixed(3)}s)! For help, type "help"`);
    },
  ],
];
for (const [at, fn] of boot) setTimeout(fn, at);

function stop() {
  if (stopping) return;
  stopping = true;
  info('Stopping the server');
  info('Stopping server');
  setTimeout(() => info('Saving players'), 50);
  setTimeout(() => info('Saving worlds'), 100);
  setTimeout(() => info("Saving chunks for level 'world'/overworld"), 150);
  setTimeout(() => {
    info('ThreadedAnvilChunkStorage: All chunks are saved');
    process.exit(0);
  }, 200);
}

const commands = {
  help() {
    info('--- Showing help ---');
    info('help - show this help');
    info('say <text> - broadcast a message');
    info('list - list the players online');
    info('tps - show the ticks per second');
    info('seed - show the world seed');
    info('stop - save and stop the server');
  },
  say(rest) {
    if (!rest) return warn('Usage: say <text>');
    info(`[Server] ${rest}`);
  },
  list() {
    info(`There are 0 of a max of ${maxPlayers} players online: `);
  },
  tps() {
    info('TPS from last 1m, 5m, 15m: 20.0, 20.0, 20.0');
  },
  seed() {
    info('Seed: [-4172144997902289642]');
  },
  stop,
  // --- test-only commands
  crash(rest) {
    const code = parseInt(rest, 10);
    process.stderr.write(`[${ts()} ERROR]: Simulated crash, exiting with code ${Number.isInteger(code) ? code : 1}\n`);
    process.exit(Number.isInteger(code) ? code : 1);
  },
  eat(rest) {
    const mib = Math.max(1, parseInt(rest, 10) || 64);
    const b = Buffer.alloc(mib * 1024 * 1024, 1);
    hogs.push(b);
    info(`Allocated ${mib} MiB (holding ${hogs.length} block(s))`);
  },
  spam(rest) {
    const [nRaw, lenRaw] = (rest || '').split(/\s+/);
    const n = Math.max(1, Math.min(1000000, parseInt(nRaw, 10) || 100));
    const len = Math.max(0, Math.min(100000, parseInt(lenRaw, 10) || 0));
    const pad = len > 0 ? ' ' + 'x'.repeat(len) : '';
    let out = '';
    for (let i = 1; i <= n; i++) {
      out += `[${ts()} INFO]: spam line ${i}${pad} #${++spamPrinted}\n`;
      if (out.length > 65536) {
        process.stdout.write(out);
        out = '';
      }
    }
    if (out) process.stdout.write(out);
  },
};

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (raw) => {
  const line = raw.trim();
  if (!line) return;
  const space = line.indexOf(' ');
  const name = (space < 0 ? line : line.slice(0, space)).toLowerCase();
  const rest = space < 0 ? '' : line.slice(space + 1).trim();
  const cmd = Object.prototype.hasOwnProperty.call(commands, name) ? commands[name] : null;
  if (!cmd) return info('Unknown command. Type "help" for help.');
  if (!ready && name !== 'stop' && name !== 'crash') return warn('The server is still starting, please wait');
  cmd(rest);
});
// keep running when stdin closes (agent restarted); the agent finds and handles leftovers
rl.on('close', () => {});

process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setInterval(() => {}, 60000);
