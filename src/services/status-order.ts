/**
 * Which of a server's statuses is the newest, by the node's numbers (ServerStateEvent.seq,
 * ServerState.statusSeq): the status of an event and the one of a power action's answer are recorded
 * only over a lower number, or none. Numbers further apart than CLOCK_RESET_SEQ come from two clocks
 * (the node's clock set back, its agent moved to another machine), not from a reordering, which is a
 * matter of a batch or two: the one that arrives last is then recorded, or the server would keep a
 * status until that clock caught up.
 */
import type { FilterQuery } from '@mikro-orm/core';
import type { Server } from '../entities/Server.js';

/** 60 s, in the numbers' unit (microseconds of the node's clock). */
export const CLOCK_RESET_SEQ = 60_000_000;

/** Whether a status numbered `seq` is newer than the recorded one (numbered `recorded`, or none). */
export function isNewerStatus(recorded: number | null, seq: number): boolean {
  return recorded === null || seq > recorded || recorded - seq > CLOCK_RESET_SEQ;
}

/** The same rule as a condition on the server's row, for an update that must not overwrite a newer status. */
export function newerStatusWhere(id: string, seq: number): FilterQuery<Server> {
  return { id, $or: [{ statusSeq: null }, { statusSeq: { $lt: seq } }, { statusSeq: { $gt: seq + CLOCK_RESET_SEQ } }] };
}
