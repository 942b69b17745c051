/**
 * Writes a server's configuration files (its blueprint's `configFiles`, an egg's `config.files`)
 * before each start. Every read and write goes through the server's file worker (filesystem/), as
 * the server's own uid and inside its directory: a symlink that points out of it is refused, never
 * followed, and nothing is written as root. A missing file is created (as Wings does), the folders
 * on its way too. The parsers run in the agent's editing thread, in bounded time (editor.ts). What
 * cannot be done is a `[panel]` console line, and the start goes on.
 */
import { Readable } from 'node:stream';
import { configValueProblem } from '../../shared/config-file-checks';
import { fillPlaceholders, type ConfigFile, type PlaceholderValues } from '../../shared/config-files';
import { childLogger } from '../../logger';
import { userVariables } from '../environment/env';
import type { FileResponse } from '../filesystem/protocol';
import type { ServerFiles } from '../filesystem/server-files';
import type { Server } from '../server/server';
import type { ConfigEditor, EditThreads } from './editor';
import { ConfigParseError } from './errors';

const log = childLogger('agent');

/** Larger files are left as they are. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export async function applyConfigFiles(files: ServerFiles, threads: EditThreads, server: Server): Promise<void> {
  const configFiles = server.spec.configFiles ?? [];
  if (!configFiles.length) return;
  const values = placeholderValues(server);
  const editor = threads.forStart();
  try {
    for (const config of configFiles) {
      try {
        await applyOne(files, server, config, values, editor);
      } catch (err) {
        log.warn({ serverId: server.id, file: config.file, err: (err as Error).message }, 'configuration file not written');
        server.systemLine(`Configuration file ${config.file} is not changed: ${(err as Error).message}`);
      }
    }
  } finally {
    editor.close();
  }
}

function placeholderValues(server: Server): PlaceholderValues {
  const env = userVariables(server.spec);
  return { port: env.SERVER_PORT ?? '', ip: env.SERVER_IP || '0.0.0.0', memory: String(server.spec.memory), env };
}

async function applyOne(files: ServerFiles, server: Server, config: ConfigFile, values: PlaceholderValues, editor: ConfigEditor): Promise<void> {
  const entries = filledEntries(server, config, values);
  if (!entries.length) return;
  editor.checkTime();
  const path = '/' + config.file;
  const before = await readText(files, server, path);
  let after: string;
  try {
    after = await editor.edit({ parser: config.parser, text: before ?? '', entries });
  } catch (err) {
    if (err instanceof ConfigParseError) throw new Error(`${err.message}; fix or delete the file`);
    throw err;
  }
  if (after === before) return;
  if (before === null) await ensureFolder(files, server, path);
  const answer = await files.write(server, path, Readable.from([Buffer.from(after)]), MAX_CONFIG_BYTES);
  if (!answer.ok) throw new Error(answer.message);
}

/**
 * The keys of `config` with their values filled in. A value filled in must still be one line (as
 * blueprints' values are): a server's variable with a line break would add lines of its own to a
 * file. A refused placeholder or value is a console line, and its key is not written.
 */
function filledEntries(server: Server, config: ConfigFile, values: PlaceholderValues): [string, string][] {
  const entries: [string, string][] = [];
  for (const [key, raw] of Object.entries(config.find)) {
    const filled = fillPlaceholders(raw, values);
    const problem = 'refused' in filled ? `the placeholder ${filled.refused} is not allowed` : filledLineProblem(filled.value);
    if (problem) server.systemLine(`Configuration file ${config.file}: ${key} is not written: ${problem}`);
    else if ('value' in filled) entries.push([key, filled.value]);
  }
  return entries;
}

function filledLineProblem(value: string): string | null {
  const problem = configValueProblem(value);
  return problem && `its value with the placeholders filled in ${problem}`;
}

/** The file's text, or null when it does not exist. */
async function readText(files: ServerFiles, server: Server, path: string): Promise<string | null> {
  const { res, body } = await files.ask(server, { op: 'read', path, maxBytes: MAX_CONFIG_BYTES });
  if (!res.ok) {
    body.destroy();
    if (res.status === 404) return null;
    throw new Error(res.message);
  }
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Makes the folders on the way to `path` (one request each: the worker's mkdir makes one level). */
async function ensureFolder(files: ServerFiles, server: Server, path: string): Promise<void> {
  const parts = path.split('/').filter(Boolean).slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const res: FileResponse = await files.simple(server, { op: 'mkdir', path: '/' + parts.slice(0, i).join('/') });
    if (!res.ok && res.code !== 'ALREADY_EXISTS') throw new Error(res.message);
  }
}
