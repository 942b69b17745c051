import { existsSync } from 'node:fs';
import type { ServerSpec, ServerStateEvent } from '../../shared/node-protocol';
import { childLogger } from '../../logger';
import { AgentError, notFound } from '../errors';
import { NOT_ISOLATED, UidAllocator } from '../environment/isolation';
import { killLeftover, pidAlive } from '../environment/proc';
import { sweepBeforeMeasuring } from '../filesystem/usage';
import type { PanelServerEntry } from '../panel-client';
import { removeLeftoverTrash } from './removal';
import { Server, type PersistedServer, type ServerRuntimeOptions } from './server';
import { StateStore } from './state-store';

const log = childLogger('agent');

/** How many removed server ids the agent remembers (see `removed`). */
const REMEMBERED_REMOVALS = 10_000;

/** All servers of this node, their persistence and the fan-out of their state events. */
export class ServerManager {
  private readonly servers = new Map<string, Server>();
  private readonly store: StateStore;
  /**
   * Ids of servers removed since the agent started (the oldest forgotten past 10,000). A push of one
   * of them is refused: it was sent before the removal and arrived after it (a PATCH racing the
   * DELETE), and would bring a deleted server back to life with its files.
   */
  private readonly removed = new Set<string>();
  /** Pushes (PUT) so far, and the count at each server's last one (see reconcile). */
  private pushes = 0;
  private readonly pushedAt = new Map<string, number>();
  private readonly uids = new UidAllocator();
  /** uids from state.json, claimed at boot before any new server gets one */
  private readonly restoredUids = new Map<string, number>();
  /** Removes what interrupted writes left in a server's directory (its file worker: see sweepFilesWith). */
  private sweeper: ((server: Server) => Promise<void>) | null = null;
  /** shutting down: the boot's sweep stops */
  private closing = false;

  constructor(
    private readonly opts: ServerRuntimeOptions,
    private readonly onEvent: (event: ServerStateEvent) => void,
  ) {
    this.store = new StateStore(opts.paths.stateFile);
  }

  list(): Server[] {
    return [...this.servers.values()];
  }

  find(id: string): Server | undefined {
    return this.servers.get(id);
  }

  get(id: string): Server {
    const s = this.servers.get(id);
    if (!s) throw notFound('Server not found');
    return s;
  }

  private snapshot(): Record<string, PersistedServer> {
    const out: Record<string, PersistedServer> = {};
    for (const [id, s] of this.servers) out[id] = s.persisted();
    return out;
  }

  private persist(): void {
    this.store.save(() => this.snapshot());
  }

  private create(spec: ServerSpec): Server {
    const kept = this.restoredUids.get(spec.id);
    this.restoredUids.delete(spec.id);
    const server = new Server(spec, this.opts, kept ?? this.uids.claim());
    server.on('state', (e: ServerStateEvent) => this.onEvent(e));
    server.on('persist', () => this.persist());
    this.servers.set(spec.id, server);
    // nothing measures its disk before what interrupted writes left there is gone
    sweepBeforeMeasuring(server.dir, () => this.sweepFiles(server));
    return server;
  }

  /**
   * How the temporary files interrupted writes left in a server's directory are removed: by its file
   * worker, as the server's user (FileWorkers.sweep). Set by the file manager (ServerFiles) before
   * the servers are restored.
   */
  sweepFilesWith(sweep: (server: Server) => Promise<void>): void {
    this.sweeper = sweep;
  }

  /** Removes what interrupted writes left in the directory of `server` (see sweepFilesWith). */
  private async sweepFiles(server: Server): Promise<void> {
    if (!this.sweeper || server.deleted) return;
    // a server refused a user of its own has no file worker (its files and its start are refused)
    if (!(await server.prepareFiles().then(() => true, () => false))) return;
    await this.sweeper(server).catch((err: Error) => log.warn({ serverId: server.id, err: err.message }, 'could not remove the temporary files of interrupted writes from the server\'s directory'));
  }

  /**
   * Sweeps every server's directory, one at a time (each takes a process of the server's user): at
   * agent boot, for the servers nothing starts or touches (those that are wait for their own sweep).
   */
  private async sweepAll(): Promise<void> {
    for (const server of this.list()) {
      if (this.closing) return;
      await this.sweepFiles(server);
    }
  }

  /** PUT /api/servers/:id — creates (and installs) a new server or updates the spec of a known one. */
  async upsert(spec: ServerSpec): Promise<Server> {
    if (this.removed.has(spec.id)) throw notFound('Server not found (it was removed from this node)');
    this.pushedAt.set(spec.id, ++this.pushes);
    const existing = this.servers.get(spec.id);
    if (existing) {
      this.updateSpec(existing, spec);
      return existing;
    }
    const server = this.create(spec);
    this.persist();
    // a server that cannot be isolated is kept, not installed: its start gives the reason
    await server.install().catch((e: unknown) => {
      if (!(e instanceof AgentError && e.code === NOT_ISOLATED)) throw e;
    });
    // deleted while it was being set up (a DELETE right after the PUT)
    if (server.deleted) throw notFound('Server not found (it was removed from this node)');
    return server;
  }

  async reinstall(id: string): Promise<Server> {
    const server = this.get(id);
    await server.install();
    return server;
  }

  /** Keeps the newer spec: pushes may arrive out of order, the revision says which is the panel's latest. */
  private updateSpec(server: Server, spec: ServerSpec): void {
    if ((spec.revision ?? 0) < server.revision) {
      log.debug({ serverId: spec.id, revision: spec.revision, had: server.revision }, 'ignoring an older server spec that arrived late');
      return;
    }
    server.updateSpec(spec);
  }

  /**
   * Deletes a server from the node: its processes (killed at once, or, `graceful`, after its stop
   * command and the grace period), its files and its backups.
   */
  async remove(id: string, graceful = false): Promise<void> {
    const server = this.get(id);
    this.servers.delete(id);
    this.pushedAt.delete(id);
    this.removed.add(id);
    if (this.removed.size > REMEMBERED_REMOVALS) this.removed.delete(this.removed.values().next().value!);
    await server.destroy(graceful);
    sweepBeforeMeasuring(server.dir, null);
    this.uids.release(server.uid);
    this.persist();
    // a store that cannot be removed now never keeps the server's deletion from happening
    await this.opts.afterRemove?.(id).catch((err: Error) => log.warn({ serverId: id, err: err.message }, 'could not remove the backups of a deleted server'));
  }

  /**
   * Agent boot. Kills processes left over from the previous run (state.json pids), then rebuilds the
   * servers from the panel's list (see reconcile), or from state.json when the panel is unreachable:
   * servers that should be running are started again, interrupted installs are re-run, the others are
   * reported as they are.
   */
  async restore(panel: PanelServerEntry[] | null): Promise<void> {
    const persisted = this.store.load();
    for (const [id, p] of Object.entries(persisted)) this.restoredUids.set(id, this.uids.claim(p?.uid));
    // the files of servers deleted while the previous run was still removing them
    await removeLeftoverTrash(this.opts.paths.servers);
    const killed: number[] = [];
    for (const [id, p] of Object.entries(persisted)) {
      if (p.pid && killLeftover(p.pid, p.pidStart ?? null)) {
        log.info({ serverId: id, pid: p.pid }, 'killed leftover server process from the previous agent run');
        killed.push(p.pid);
      }
      // and what its processes had started outside their process group
      const strays = this.opts.cgroups.killAll(id);
      if (strays) log.info({ serverId: id, strays }, 'killed leftover processes of the previous agent run in the server\'s cgroup');
    }
    const deadline = Date.now() + 3000;
    while (killed.some((pid) => pidAlive(pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));

    if (panel) {
      // state.json's servers as they were (none runs), for the panel's list to keep or remove
      for (const [id, p] of Object.entries(persisted)) {
        if (p?.spec?.id === id && !panel.some((e) => e.spec.id === id)) this.create(p.spec).restore(p);
      }
      await this.reconcile(panel, this.mark(), persisted);
    } else {
      for (const p of Object.values(persisted)) if (p?.spec?.id) await this.adopt(p.spec, p, undefined);
    }
    this.persist();
    // what interrupted writes of the previous run left: a server started above, or asked for its
    // files, waited for its own sweep (usage.ts, workers.ts); the others are swept now
    void this.sweepAll();
  }

  /** The count of pushes so far: taken before the panel is asked for its list (see reconcile). */
  mark(): number {
    return this.pushes;
  }

  /**
   * The panel's complete list of this node's servers (at boot, or fetched again later), asked for when
   * the push count was `since`. Servers it lists are adopted (with their state.json entry in `local`)
   * or given the newer spec. A server it does not list was deleted on the panel while this node could
   * not be told (a force-delete): it is stopped (killed after the grace period) and removed with its
   * files, unless it was pushed after `since` (created after the panel read its list).
   */
  async reconcile(panel: PanelServerEntry[], since: number, local: Record<string, PersistedServer> = {}): Promise<void> {
    const listed = new Set(panel.map((e) => e.spec.id));
    const gone = this.list().filter((s) => !listed.has(s.id) && (this.pushedAt.get(s.id) ?? 0) <= since);
    await Promise.all(gone.map((s) => this.removeUnlisted(s)));
    for (const e of panel) {
      const s = this.servers.get(e.spec.id);
      if (s) this.updateSpec(s, e.spec);
      else if (!this.removed.has(e.spec.id)) await this.adopt(e.spec, local[e.spec.id], e.status);
    }
  }

  private async removeUnlisted(server: Server): Promise<void> {
    const { id, name } = server.spec;
    log.warn({ serverId: id, name, status: server.status }, 'server unknown to the panel (deleted while this node could not be told): stopping it and removing it with its files');
    await this.remove(id, true).catch((err: Error) => log.error({ serverId: id, err: err.message }, 'could not remove a server unknown to the panel'));
  }

  private async adopt(spec: ServerSpec, local: PersistedServer | undefined, panelStatus: string | undefined): Promise<void> {
    if (this.servers.has(spec.id)) return;
    await this.bring(spec, local, panelStatus).catch((err: Error) => log.error({ serverId: spec.id, err: err.message }, 'could not restore server'));
  }

  private async bring(spec: ServerSpec, local: PersistedServer | undefined, panelStatus: string | undefined): Promise<void> {
    const server = this.create(spec);
    if (local) {
      server.restore(local);
      if (!local.installed) {
        log.info({ serverId: spec.id }, 'install was interrupted; running it again');
        await server.install();
      } else if (local.status === 'install_failed') {
        server.announce();
      } else if (local.desiredRunning) {
        // the agent's death ended its process; a server without one (its restart after a crash waited)
        // keeps the last stop reported
        server.announce(local.status === 'offline' ? undefined : 'agent_restart');
        await this.startRestored(server);
      } else {
        server.announce();
      }
      return;
    }
    // known by the panel only
    if (panelStatus === 'installing' || !existsSync(server.dir)) {
      await server.install();
    } else if (panelStatus === 'install_failed') {
      server.restore({ spec, installed: true, desiredRunning: false, status: 'install_failed', pid: null, pidStart: null, exitCode: null, reason: 'install_failed' });
      server.announce();
    } else {
      const wasRunning = panelStatus === 'running' || panelStatus === 'starting';
      server.restore({ spec, installed: true, desiredRunning: wasRunning, status: 'offline', pid: null, pidStart: null, exitCode: null, reason: null });
      if (wasRunning) {
        server.announce('agent_restart');
        await this.startRestored(server);
      } else server.announce();
    }
  }

  private async startRestored(server: Server): Promise<void> {
    try {
      await server.start();
    } catch (e) {
      log.warn({ serverId: server.id, err: (e as Error).message }, 'could not start server again after agent restart');
    }
  }

  async shutdown(stopServers: boolean): Promise<void> {
    this.closing = true;
    await Promise.all(this.list().map((s) => s.shutdown(stopServers).catch((e: Error) => log.error({ serverId: s.id, err: e.message }, 'shutdown failed'))));
    await this.store.flush(() => this.snapshot());
  }
}
