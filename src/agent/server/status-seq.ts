/**
 * The number of a server's status change (ServerStateEvent.seq, ServerState.statusSeq): strictly
 * increasing across all the servers of this agent, and across its restarts too, as it starts from the
 * clock in microseconds (a safe integer until the year 2255). The panel keeps, of the statuses it
 * hears (events and the answers to power actions), the one with the highest number.
 */
let last = 0;

export function nextStatusSeq(): number {
  last = Math.max(last + 1, Date.now() * 1000);
  return last;
}
