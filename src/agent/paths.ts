import { existsSync } from 'node:fs';
import path from 'node:path';

/** Server ids are used as directory names: only UUID-like slugs are accepted. */
export const SERVER_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

let assetsDirCache: string | null = null;

/**
 * Absolute path of the repository's `assets/` directory. Works from `src/agent` (ts-node / jest) and
 * from `dist/src/agent` (compiled) by walking up until a directory holding `assets/demo-game.js` is found.
 */
export function assetsDir(): string {
  if (assetsDirCache) return assetsDirCache;
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    const candidate = path.join(dir, 'assets');
    if (existsSync(path.join(candidate, 'demo-game.js'))) return (assetsDirCache = candidate);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return (assetsDirCache = path.resolve(process.cwd(), 'assets'));
}

export interface AgentPaths {
  root: string; // <dataDir>/agent
  servers: string; // <dataDir>/agent/servers
  /** a copy of the repository's assets/ that every server user can read (ASSETS_DIR) */
  assets: string; // <dataDir>/agent/assets
  installLogs: string; // <dataDir>/agent/install-logs
  stateFile: string; // <dataDir>/agent/state.json
  /** a copy of the file worker's compiled code that every server user can read */
  lib: string; // <dataDir>/agent/lib
  /** one folder per server (its user's alone) for its file worker's socket */
  run: string; // <dataDir>/agent/run
}

export function agentPaths(dataDir: string): AgentPaths {
  const root = path.resolve(dataDir, 'agent');
  return {
    root,
    servers: path.join(root, 'servers'),
    assets: path.join(root, 'assets'),
    installLogs: path.join(root, 'install-logs'),
    stateFile: path.join(root, 'state.json'),
    lib: path.join(root, 'lib'),
    run: path.join(root, 'run'),
  };
}

export function serverDir(paths: AgentPaths, id: string): string {
  if (!SERVER_ID_RE.test(id)) throw new Error(`invalid server id: ${id}`);
  return path.join(paths.servers, id);
}
