/** `/api/agent/v1`: the routes node agents call (signed with their node key, never by users). */
import express, { Router } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { apiErrorHandler, apiNotFound } from '../http/errors.js';
import { authenticateNode, keepRawBody, nodeHeaderCheck, type SharedNonces } from '../http/node-auth.js';
import type { AgentClient } from '../nodes/agent-client.js';
import type { NodeAgentService } from '../services/node-agent.service.js';
import { sendData, sendNoContent } from './respond.js';

export function agentRoutes(orm: MikroORM, agents: AgentClient, nodeAgent: NodeAgentService, shared?: SharedNonces): Router {
  const r = Router();
  // the body (up to 8 MB: a node's queued events) is read only for a fresh header of a known node
  r.use(nodeHeaderCheck(orm));
  r.use(express.json({ limit: '8mb', verify: keepRawBody }));
  r.use(authenticateNode(agents, shared));
  r.get('/servers', async (req, res) => sendData(res, await nodeAgent.serversOf(req.node!)));
  r.post('/events', async (req, res) => {
    await nodeAgent.applyEvents(req.node!, req.body);
    sendNoContent(res);
  });
  r.post('/heartbeat', async (req, res) => {
    await nodeAgent.heartbeat(req.node!, req.body);
    sendNoContent(res);
  });
  r.use(apiNotFound);
  r.use(apiErrorHandler);
  return r;
}
