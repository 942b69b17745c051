/** `/servers/:id/backups`: one-liners over BackupsService; the download is streamed from the node. */
import { Router } from 'express';
import { pipeline } from 'node:stream/promises';
import { attachment } from '../http/attachment.js';
import type { Services } from '../services/index.js';
import { parsePagination } from '../validation/pagination.js';
import { presentBackup } from './presenters.js';
import { sendData, sendList, sendNoContent } from './respond.js';

export function backupRoutes(services: Services): Router {
  const r = Router();
  const b = services.backups;
  const one = '/servers/:id/backups/:backupId';
  r.get('/servers/:id/backups', async (req, res) => sendList(res, await b.list(req.actor ?? null, req.params.id, parsePagination(req.query)), presentBackup));
  r.post('/servers/:id/backups', async (req, res) => sendData(res, presentBackup(await b.create(req.actor ?? null, req.params.id, req.body)), 201));
  r.get(one, async (req, res) => sendData(res, presentBackup(await b.get(req.actor ?? null, req.params.id, req.params.backupId))));
  r.post(`${one}/restore`, async (req, res) => sendData(res, presentBackup(await b.restore(req.actor ?? null, req.params.id, req.params.backupId, req.body))));
  r.post(`${one}/lock`, async (req, res) => sendData(res, presentBackup(await b.setLocked(req.actor ?? null, req.params.id, req.params.backupId, true))));
  r.post(`${one}/unlock`, async (req, res) => sendData(res, presentBackup(await b.setLocked(req.actor ?? null, req.params.id, req.params.backupId, false))));
  r.delete(one, async (req, res) => {
    await b.remove(req.actor ?? null, req.params.id, req.params.backupId);
    sendNoContent(res);
  });
  r.get(`${one}/download`, async (req, res) => {
    const { response, backup } = await b.download(req.actor ?? null, req.params.id, req.params.backupId);
    res.status(200).setHeader('content-type', 'application/gzip');
    res.setHeader('content-disposition', attachment(`${backup.name}.tar.gz`));
    await pipeline(response.body, res);
  });
  return r;
}
