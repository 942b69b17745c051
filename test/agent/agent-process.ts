/**
 * A node agent in a process of its own (`node dist/src/agent/main.js`, what `npm run agent` runs),
 * optionally as another user: for what depends on the agent's privileges, which the test process
 * (root) cannot show in-process. Needs the built dist/ (`npm test` builds it first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync } from 'node:fs';
import path from 'node:path';
import { deriveNodeKey, generateNodeToken, signRequest } from '../../src/shared/node-protocol';
import { FakePanel, tmpDir } from './helpers';

export const AGENT_MAIN = path.resolve(__dirname, '../../dist/src/agent/main.js');
export const hasAgentBuild = existsSync(AGENT_MAIN);

/** The unprivileged user the agent runs as (nobody). */
export const NOBODY = 65534;

export interface AgentProcess {
  child: ChildProcess;
  port: number;
  dataDir: string;
  /** the fake panel it reports to (none when started for a real panel) */
  panel: FakePanel | null;
  output(): string;
  request(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export interface NodeIdentity {
  panelUrl: string;
  nodeId: string;
  nodeToken: string;
}

/**
 * Starts the agent as `uid` (setpriv, no supplementary groups) on a new DATA_DIR owned by that user,
 * for a real panel (`node`) or a fake one; resolves once it listens.
 */
export async function startAgentProcess(uid: number, env: Record<string, string> = {}, node?: NodeIdentity): Promise<AgentProcess> {
  const nodeId = node?.nodeId ?? 'node-' + Math.random().toString(36).slice(2, 10);
  const nodeToken = node?.nodeToken ?? generateNodeToken();
  const nodeKey = deriveNodeKey(nodeToken);
  const panel = node ? null : new FakePanel(nodeId, nodeKey);
  await panel?.listen();
  const dataDir = tmpDir('hp-agent-proc-');
  chownSync(dataDir, uid, uid);
  const child = spawn(
    'setpriv',
    [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, AGENT_MAIN],
    {
      cwd: path.dirname(AGENT_MAIN),
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        PANEL_URL: node?.panelUrl ?? panel!.url,
        NODE_ID: nodeId,
        NODE_TOKEN: nodeToken,
        AGENT_PORT: '0',
        SFTP_PORT: '0',
        AGENT_HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        STOP_GRACE_SECONDS: '2',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('agent did not listen within 30 s:\n' + out)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"port":(\d+)[^\n]*node agent listening/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agent exited with ${code}:\n${out}`));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    child,
    port,
    dataDir,
    panel,
    output: () => out,
    async request(method, p, body) {
      const text = body === undefined ? '' : JSON.stringify(body);
      const headers: Record<string, string> = { authorization: signRequest(nodeId, nodeKey, method, p, text) };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : text });
      const raw = await res.text();
      return { status: res.status, body: raw ? JSON.parse(raw) : undefined };
    },
    async stop() {
      child.removeAllListeners('exit');
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await panel?.close();
    },
  };
}
