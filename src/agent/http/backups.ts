/**
 * The agent's backup routes (under /api/servers/:id/backups): start one, restore one, delete one,
 * and stream one as a `.tar.gz`. Making and restoring run in the background; their progress and
 * outcome reach the panel on the event queue (src/agent/backups).
 */
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { Backups } from '../backups';
import { notFound } from '../errors';
import type { ServerManager } from '../server/manager';
import { parseBody } from './validation';

export const BACKUP_ROUTE = /^\/api\/servers\/([^/]+)\/backups(?:\/([A-Za-z0-9_-]{1,64})(?:\/(restore|download))?)?$/;

const createSchema = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), ignored: z.array(z.string().max(1024)).max(1000) });
const restoreSchema = z.object({ truncate: z.boolean() });

export interface BackupsContext {
  manager: ServerManager;
  backups: Backups;
}

/** Handles one backup route; `json` is the verified JSON body. Returns the answer's data (or undefined: 204), or streams. */
export async function handleBackups(ctx: BackupsContext, method: string, pathname: string, json: () => unknown, res: ServerResponse): Promise<{ data?: unknown } | 'streamed'> {
  const [, serverId, backupId, action] = BACKUP_ROUTE.exec(pathname)!;
  const id = decodeURIComponent(serverId!);
  if (method === 'DELETE' && backupId && !action) {
    await ctx.backups.remove(id, backupId);
    return {};
  }
  const server = ctx.manager.find(id);
  if (!server || server.deleted) throw notFound('Server not found');
  if (method === 'POST' && !backupId) {
    const { id: newId, ignored } = parseBody(createSchema, json());
    await server.prepareFiles();
    ctx.backups.start(server, newId, ignored);
    return { data: { id: newId } };
  }
  if (method === 'POST' && action === 'restore') {
    await server.prepareFiles();
    await ctx.backups.restore(server, backupId!, parseBody(restoreSchema, json()).truncate);
    return { data: { id: backupId } };
  }
  if (method === 'GET' && action === 'download') {
    const archive = await ctx.backups.download(id, backupId!);
    res.writeHead(200, { 'content-type': 'application/gzip', 'cache-control': 'no-store' });
    // the headers go now: gzip's first bytes may come only after thousands of small files, and the
    // panel waits for the headers only (10 s)
    res.flushHeaders();
    await pipeline(archive, res);
    return 'streamed';
  }
  throw notFound('Unknown route');
}
