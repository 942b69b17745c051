/**
 * Announces the activity entries a change's unit of work wrote, once they are committed: after the
 * flush that wrote them, or, when that flush ran inside a transaction, after the transaction commits
 * (one rolled back announces nothing). A `serverActivity` subscriber never gets an entry that is not
 * in the log, such as one of a change refused by a constraint at its flush.
 */
import { ChangeSetType, type EventSubscriber, type FlushEventArgs, type TransactionEventArgs } from '@mikro-orm/core';
import { Activity } from '../entities/Activity.js';

export class ActivityAnnouncer implements EventSubscriber {
  /** entries flushed inside a transaction, by the transaction, until it ends */
  private readonly waiting = new Map<unknown, Activity[]>();

  constructor(private readonly announce: (entries: readonly Activity[]) => void) {}

  afterFlush({ em, uow }: FlushEventArgs): void {
    const written = uow
      .getChangeSets()
      .filter((cs) => cs.type === ChangeSetType.CREATE && cs.entity instanceof Activity)
      .map((cs) => cs.entity as Activity);
    if (!written.length) return;
    if (!em.isInTransaction()) return this.announce(written);
    const tx = em.getTransactionContext();
    this.waiting.set(tx, [...(this.waiting.get(tx) ?? []), ...written]);
  }

  afterTransactionCommit({ transaction }: TransactionEventArgs): void {
    const written = this.waiting.get(transaction);
    if (!written) return;
    this.waiting.delete(transaction);
    this.announce(written);
  }

  afterTransactionRollback({ transaction }: TransactionEventArgs): void {
    this.waiting.delete(transaction);
  }
}
