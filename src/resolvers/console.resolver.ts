/**
 * Console subscriptions over graphql-ws. Each one is authorized (`websocket.connect`) before it starts,
 * fed by the gateway's console hub (one upstream per server, history first), and bounded: a
 * subscriber that falls too far behind is ended instead of growing the gateway's memory.
 */
import { Arg, ID, Resolver, Root, Subscription } from 'type-graphql';
import { eventIterator } from '../console/iterator.js';
import type { BatchLine, ConsoleEvent } from '../console/types.js';
import type { Server } from '../entities/Server.js';
import type { GraphQLContext } from '../graphql/context.js';
import { ConsoleBatch, ConsoleLine, ServerStatsEvent, ServerStatusEvent } from '../schema/console.js';
import { isNewerStatus } from '../services/status-order.js';

interface SubArgs {
  args: { serverId: string };
  context: GraphQLContext;
}

/** How one subscriber sees its server's events: the mapping, and what it gets before any event. */
interface View<T> {
  map: (e: ConsoleEvent, serverId: string) => T | undefined;
  initial?: T[];
}

async function feed<T>({ args, context }: SubArgs, view: (server: Server) => View<T>, lines: 'each' | 'batched' = 'each') {
  // Authorize first, so that a refused subscription is an error result rather than an empty stream.
  const server = await context.services.console.authorize(context.actor, args.serverId);
  const actor = context.actor!;
  const { map, initial } = view(server);
  return eventIterator(
    (listener) => context.services.console.subscribe(actor, server, listener, lines),
    (e) => map(e, server.id),
    undefined,
    initial,
  );
}

/** Every subscriber sees the same values (see `once`). */
const sameForAll = <T>(map: View<T>["map"]) => (): View<T> => ({ map });

/**
 * Status changes, starting with the current status (the server's record, which the node's events keep
 * up to date): a subscriber that joins a console already open on some instance learns it at once, not
 * at the next change. A status equal to the last one sent (the node repeats it when a feed opens) is
 * not sent again.
 */
function statusChanges(server: Server): View<ServerStatusEvent> {
  let last: string = server.status;
  let lastSeq: number | null = server.statusSeq;
  return {
    initial: [{ serverId: server.id, status: server.status }],
    map: (e, serverId) => {
      const v = toStatus(e, serverId);
      if (!v) return undefined;
      // numbered by the node (ServerStateEvent.seq): one older than the last sent came late (another feed, a reconnect)
      const seq = typeof e.data?.seq === 'number' ? e.data.seq : null;
      if (seq !== null) {
        if (lastSeq !== null && !isNewerStatus(lastSeq, seq)) return undefined;
        lastSeq = seq;
      }
      if (v.status === last) return undefined;
      last = v.status;
      return v;
    },
  };
}

/**
 * One event reaches every subscriber of its server as the same object: each mapper converts it once
 * and hands the same value to all of them.
 */
function once<T>(map: (e: ConsoleEvent, serverId: string) => T | undefined) {
  const done = new WeakMap<ConsoleEvent, T | undefined>();
  return (e: ConsoleEvent, serverId: string): T | undefined => {
    if (done.has(e)) return done.get(e);
    const v = map(e, serverId);
    done.set(e, v);
    return v;
  };
}

const toLine = once((e, serverId): ConsoleLine | undefined =>
  e.type === 'console_output' || e.type === 'install_output'
    ? {
        serverId,
        line: String(e.data?.line ?? ''),
        stream: e.type === 'install_output' ? 'install' : String(e.data?.stream ?? 'stdout'),
        ts: String(e.data?.ts ?? new Date().toISOString()),
        seq: Number.isInteger(e.data?.seq) ? (e.data.seq as number) : null,
      }
    : undefined,
);
const toBatch = once((e, serverId): ConsoleBatch | undefined =>
  e.type === 'console_batch'
    ? { serverId, skipped: Number(e.data?.skipped ?? 0), lines: (e.data?.lines ?? []).map((l: BatchLine) => ({ serverId, ...l })) }
    : undefined,
);
const toStatus = once((e, serverId): ServerStatusEvent | undefined =>
  e.type === 'status' && e.data?.status ? { serverId, status: String(e.data.status) } : undefined,
);
const toStats = once((e, serverId): ServerStatsEvent | undefined =>
  e.type === 'stats'
    ? { serverId, cpu: Number(e.data?.cpu ?? 0), memory: Number(e.data?.memory ?? 0), disk: Number(e.data?.disk ?? 0), uptime: Number(e.data?.uptime ?? 0) }
    : undefined,
);

@Resolver()
export class ConsoleResolver {
  @Subscription(() => ConsoleLine, {
    description: 'Lines of a server console: the recent history (up to 150 lines) first, then live output and install output.',
    subscribe: (async (a: SubArgs) => feed(a, sameForAll(toLine))) as any,
  })
  consoleOutput(@Arg('serverId', () => ID) _serverId: string, @Root() line: ConsoleLine): ConsoleLine {
    return line;
  }

  @Subscription(() => ConsoleBatch, {
    description:
      'Lines of a server console in batches (at most one per 50 ms): the recent history (up to 150 lines) first, then live output and install output, with the count of lines the node dropped under its output budget. The same shape as the node channel\'s console_batch frames.',
    subscribe: (async (a: SubArgs) => feed(a, sameForAll(toBatch), 'batched')) as any,
  })
  consoleBatches(@Arg('serverId', () => ID) _serverId: string, @Root() batch: ConsoleBatch): ConsoleBatch {
    return batch;
  }

  @Subscription(() => ServerStatusEvent, {
    description: 'Status changes of a server (the current status first).',
    subscribe: (async (a: SubArgs) => feed(a, statusChanges)) as any,
  })
  serverStatus(@Arg('serverId', () => ID) _serverId: string, @Root() event: ServerStatusEvent): ServerStatusEvent {
    return event;
  }

  @Subscription(() => ServerStatsEvent, {
    description: 'Resource use of a running server, about every 2 seconds.',
    subscribe: (async (a: SubArgs) => feed(a, sameForAll(toStats))) as any,
  })
  serverStats(@Arg('serverId', () => ID) _serverId: string, @Root() event: ServerStatsEvent): ServerStatsEvent {
    return event;
  }
}
