import type { Blueprint } from '../entities/Blueprint.js';
import type { Server } from '../entities/Server.js';
import type { ServerSpec } from '../shared/node-protocol.js';

/** What the agent needs to run a server: its blueprint's recipe and the server's own values. */
export function serverSpec(server: Server, blueprint: Blueprint = server.blueprint): ServerSpec {
  const variables: Record<string, string> = {};
  for (const v of blueprint.variables) variables[v.key] = v.default;
  Object.assign(variables, server.variables);
  return {
    id: server.id,
    name: server.name,
    startup: blueprint.startup,
    stop: blueprint.stop,
    ready: blueprint.ready,
    install: blueprint.install,
    installShell: blueprint.installShell,
    configFiles: blueprint.configFiles,
    variables,
    memory: server.memory,
    cpu: server.cpu,
    disk: server.disk,
    autoRestart: server.autoRestart,
    revision: server.specRevision,
  };
}
