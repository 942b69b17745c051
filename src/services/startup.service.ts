/**
 * A server's startup variables as its users see them (GET/PUT /servers/:id/startup): the variables
 * its blueprint marks user-viewable, with the server's values, and the startup command with those
 * values in place. Only user-editable ones may be changed here, each checked by its rules; the
 * owner and administrators change the others through PATCH /servers/:id. The rules are the same
 * for owner, subusers and administrators: this is the users' view of a server.
 */
import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { startupLine } from '../blueprints/startup-line.js';
import type { Blueprint } from '../entities/Blueprint.js';
import { Node } from '../entities/Node.js';
import { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import { demand, may, type ServerAccess } from '../permissions/policy.js';
import { parseInput } from '../validation/common.js';
import { updateStartupInput } from '../validation/startup.js';
import type { ActivityRecorder } from './activity.service.js';
import { requireActor, type Actor } from './actor.js';
import { assertMayChangeVariables, type ServerRules } from './server-rules.js';
import { editable, userMayNotGive, valueOf, variableProblem, viewable } from './server-variables.js';
import type { ServersService } from './servers.service.js';

export interface StartupVariable {
  key: string;
  name: string;
  description: string;
  default: string;
  rules: string;
  userEditable: boolean;
  value: string;
}

export interface StartupView {
  startup: string;
  variables: StartupVariable[];
}


/** The users' view of a server's startup: viewable variables only, their values in the command. */
export function startupView(blueprint: Blueprint, values: Record<string, string>): StartupView {
  const shown = (blueprint.variables ?? []).filter(viewable);
  const variables = shown.map((v) => ({
    key: v.key,
    name: v.name ?? v.key,
    description: v.description,
    default: v.default,
    rules: v.rules,
    userEditable: editable(v),
    value: valueOf(v, values),
  }));
  return { startup: startupLine(blueprint.startup, new Map(variables.map((v) => [v.key, v.value]))), variables };
}

/**
 * What an update answers: the whole view for a caller who may read it (startup.read), else the
 * variables they sent and the startup template with its placeholders (the other values are
 * startup.read's to see, as Pterodactyl answers a variable's update with that variable).
 */
function answerFor(access: ServerAccess, view: StartupView, blueprint: Blueprint, sent: readonly string[]): StartupView {
  if (may(access, 'startup.read')) return view;
  return { startup: blueprint.startup, variables: view.variables.filter((v) => sent.includes(v.key)) };
}

/** `variables.<KEY>` → what is wrong, for every given key that may not be set or breaks its rules. */
function problemsOf(blueprint: Blueprint, given: Record<string, string>, current: Record<string, string>, mayRead: boolean): Record<string, string> {
  const byKey = new Map((blueprint.variables ?? []).map((v) => [v.key, v]));
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(given)) {
    const v = byKey.get(key);
    const problem = userMayNotGive(v, value, current, 'is not a startup variable of this server', mayRead) ?? variableProblem(v!, value);
    if (problem) fields[`variables.${key}`] = problem;
  }
  return fields;
}

export class StartupService {
  constructor(
    private readonly orm: MikroORM,
    private readonly servers: ServersService,
    private readonly rules: ServerRules,
    private readonly activity: ActivityRecorder,
  ) {}

  async get(actor: Actor | null, serverId: string): Promise<StartupView> {
    const { server, access } = await this.servers.access(actor, serverId);
    demand(access, 'startup.read');
    return startupView(server.blueprint, server.variables);
  }

  /** Sets user-editable variables (422 per variable otherwise), tells the node, answers like `get` (see answerFor). */
  async update(actor: Actor | null, serverId: string, input: unknown): Promise<StartupView> {
    const a = requireActor(actor);
    const { server: current, access } = await this.servers.access(a, serverId);
    demand(access, 'startup.update');
    const { variables: asked } = parseInput(updateStartupInput, input);
    const fields = problemsOf(current.blueprint, asked, current.variables, may(access, 'startup.read'));
    if (Object.keys(fields).length) throw AppError.validation(fields, 'Some startup variables cannot take these values: correct the fields named in details.fields and save again.');
    // what a record read and sent back repeats is no change
    const byKey = new Map((current.blueprint.variables ?? []).map((v) => [v.key, v]));
    const given = Object.fromEntries(Object.entries(asked).filter(([key, value]) => value !== valueOf(byKey.get(key)!, current.variables)));
    const sent = Object.keys(asked);
    if (!Object.keys(given).length) return answerFor(access, startupView(current.blueprint, current.variables), current.blueprint, sent);
    assertMayChangeVariables(a, current.blueprint, this.rules);
    await this.save(a, current, given);
    const saved = await this.servers.afterWrite(current.id, access);
    return answerFor(access, startupView(saved.blueprint, saved.variables), saved.blueprint, sent);
  }

  /**
   * Merges the values into what is committed. Like every update of a node's servers it holds the
   * node row's lock, so concurrent writes of the server's variables take turns.
   */
  private async save(actor: Actor, current: Server, given: Record<string, string>): Promise<void> {
    await this.orm.em.transactional(async (em) => {
      await em.findOne(Node, { id: current.node.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      const server = await em.findOne(Server, { id: current.id }, { refresh: true });
      if (!server) throw AppError.notFound('Server'); // deleted meanwhile
      server.variables = { ...server.variables, ...given };
      server.specRevision += 1;
      // the keys only: values can be secrets (a game's admin password)
      await this.activity.record({ event: 'server:startup.edit', serverId: server.id, actor, properties: { variables: Object.keys(given) } }, em);
    });
  }
}
