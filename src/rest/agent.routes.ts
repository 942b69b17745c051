/** `/api/agent/v1`: the routes node agents call (signed with their node key, never by users). */
import express, { Router } from 'express';
import { apiErrorHandler, apiNotFound } from '../http/errors.js';
import { authenticateNode, NodeAuthFailures, nodeHeaderCheck, type SharedNonces } from '../http/node-auth.js';
import type { AgentClient } from '../nodes/agent-client.js';
import type { NodeAgentService } from '../services/node-agent.service.js';
import type { SftpService } from '../services/sftp.service.js';
import { spendSigninAttempt } from '../http/limit-middleware.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { sendData, sendNoContent } from './respond.js';

export function agentRoutes(agents: AgentClient, nodeAgent: NodeAgentService, sftp: SftpService, limiter: RateLimiter, shared?: SharedNonces): Router {
  const r = Router();
  const failures = new NodeAuthFailures();
  // the body (up to 8 MB: a node's queued events) is read only for a fresh header of a known node,
  // as raw bytes; it is parsed only once the signature over those bytes holds
  r.use(nodeHeaderCheck((id) => nodeAgent.findNode(id), failures));
  r.use(express.raw({ type: () => true, limit: '8mb' }));
  r.use(authenticateNode(agents, failures, shared));
  r.get('/servers', async (req, res) => sendData(res, await nodeAgent.serversOf(req.node!)));
  r.post('/events', async (req, res) => {
    await nodeAgent.applyEvents(req.node!, req.body);
    sendNoContent(res);
  });
  r.post('/heartbeat', async (req, res) => sendData(res, await nodeAgent.heartbeat(req.node!, req.body)));
  // an SFTP login spends the client address's sign-in budget, like POST /auth/signin
  r.post('/sftp/login', async (req, res) => {
    const ip = (req.body as { ip?: unknown } | undefined)?.ip;
    await spendSigninAttempt(limiter, typeof ip === 'string' ? ip : 'unknown');
    sendData(res, await sftp.login(req.node!, req.body));
  });
  r.use(apiNotFound);
  r.use(apiErrorHandler);
  return r;
}
