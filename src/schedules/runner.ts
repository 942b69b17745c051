/**
 * The schedule runner of one panel instance. Every tick it claims the due runs in the shared
 * database (src/schedules/claim.ts: each run is claimed by one instance only), batch after batch
 * until nothing is due (at most TICK_MAX_CLAIMS runs or TICK_MAX_MS per tick), and executes them in
 * the background (src/schedules/execute.ts). Its clock is injected: `now()` and `sleep()` default
 * to the real ones, and tests drive `tick()` and await `idle()` with a clock of their own.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { childLogger } from '../logger.js';
import type { ActivityRecorder } from '../services/activity.service.js';
import type { Actor } from '../services/actor.js';
import { Schedule } from '../entities/Schedule.js';
import type { ScheduleRun } from '../entities/ScheduleRun.js';
import { ALIVE_EVERY_MS, endAbandoned, markAlive } from './abandoned.js';
import { claim, dueSchedules, startManualRun, type DueSchedule } from './claim.js';
import { executeRun, RunEnded, RunnerStopped, type ClaimedRun } from './execute.js';
import type { PerformTask } from './tasks.js';

const log = childLogger('schedules');

export interface RunnerClock {
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

/** What one tick claims at most, and for how long (real time) it reads further batches. */
export const TICK_MAX_CLAIMS = 5000;
export const TICK_MAX_MS = 4000;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class ScheduleRunner {
  readonly now: () => Date;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The ids of the runs under way here, marked alive every ALIVE_EVERY_MS (src/schedules/abandoned.ts). */
  private readonly underWay = new Set<string>();
  private ticking: Promise<number> | null = null;
  private readonly stopping = new AbortController();

  constructor(
    private readonly orm: MikroORM,
    private readonly activity: ActivityRecorder,
    private readonly perform: PerformTask,
    clock: RunnerClock = {},
  ) {
    this.now = clock.now ?? (() => new Date());
    this.sleep = clock.sleep ?? realSleep;
  }

  /**
   * Ticks every `everyMs` until the returned function is called, which stops the runs under way
   * at their next wait (their tasks left are recorded as skipped) and waits for them to be written.
   */
  start(everyMs: number): () => Promise<void> {
    const timer = setInterval(() => void this.tick().catch((err: Error) => log.warn({ err: err.message }, 'could not claim due schedule runs')), everyMs);
    timer.unref();
    const beat = () => void this.heartbeat().catch((err: Error) => log.warn({ err: err.message }, 'could not mark the schedule runs under way alive'));
    const alive = setInterval(beat, ALIVE_EVERY_MS);
    alive.unref();
    beat();
    return async () => {
      clearInterval(timer);
      clearInterval(alive);
      this.stopping.abort();
      await this.ticking?.catch(() => undefined);
      await this.idle();
    };
  }

  /** The injected wait, cut short (rejected) when the runner stops. */
  private wait = (ms: number): Promise<void> => {
    const signal = this.stopping.signal;
    if (signal.aborted) return Promise.reject(new RunnerStopped());
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(new RunnerStopped());
      signal.addEventListener('abort', onAbort, { once: true });
      this.sleep(ms).then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, reject);
    });
  };

  /** Claims the runs due now and starts them; resolves with how many this instance claimed. */
  tick(): Promise<number> {
    if (this.stopping.signal.aborted) return Promise.resolve(0);
    this.ticking ??= this.claimDue().finally(() => (this.ticking = null));
    return this.ticking;
  }

  /**
   * Marks the runs under way here alive, and ends the runs of any instance that nothing has marked for
   * ABANDONED_AFTER_MS (src/schedules/abandoned.ts); resolves with how many it ended.
   */
  async heartbeat(): Promise<number> {
    const now = this.now();
    await markAlive(this.orm, [...this.underWay], now);
    const ended = await endAbandoned(this.orm, now);
    if (ended) log.warn({ runs: ended }, 'schedule runs whose panel stopped before they ended are marked failed');
    return ended;
  }

  /** Resolves once every run started by this runner has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Starts a run now (enabled or not) for `actor` of the schedule `pick` reads, locked, and accepts
   * (src/schedules/claim.ts startManualRun); resolves with the new run.
   */
  async runNow(actor: Actor, pick: (em: EntityManager) => Promise<Schedule>): Promise<ScheduleRun> {
    const run = await startManualRun(this.orm, this.activity, pick, actor, this.now());
    this.launch(run, { actor, properties: { scheduleId: run.schedule.id, runId: run.id } });
    return run;
  }

  /**
   * Claims batch after batch of due runs until none is due, every claim of a batch failed (they are
   * tried again next tick), or the tick has claimed TICK_MAX_CLAIMS runs or spent TICK_MAX_MS.
   */
  private async claimDue(): Promise<number> {
    const now = this.now();
    const until = Date.now() + TICK_MAX_MS;
    let claimed = 0;
    for (;;) {
      const batch = await dueSchedules(this.orm, now);
      const { ran, failed } = await this.claimBatch(batch, now);
      claimed += ran;
      if (!batch.length || failed === batch.length || claimed >= TICK_MAX_CLAIMS || Date.now() > until) return claimed;
    }
  }

  /** Claims each due run of the batch: how many this instance claimed, and how many claims threw. */
  private async claimBatch(batch: DueSchedule[], now: Date): Promise<{ ran: number; failed: number }> {
    let ran = 0;
    let failed = 0;
    for (const due of batch) {
      const run = await claim(this.orm, this.activity, due, now).catch((err: Error) => {
        log.warn({ err: err.message, scheduleId: due.id }, 'could not claim a due schedule run; trying again next tick');
        failed++;
        return null;
      });
      if (!run) continue;
      ran++;
      if (run.status === 'running') this.launch(run, { actor: null, properties: { scheduleId: due.id, runId: run.id } });
    }
    return { ran, failed };
  }

  private launch(run: ScheduleRun, by: ClaimedRun['by']): void {
    const schedule: Schedule = run.schedule;
    const claimed: ClaimedRun = { runId: run.id, scheduleId: schedule.id, serverId: schedule.server.id, tasks: schedule.tasks, onlyWhenOnline: schedule.onlyWhenOnline, by, timezone: schedule.timezone };
    const p = executeRun({ orm: this.orm, perform: this.perform, now: this.now, sleep: this.wait, stopped: () => this.stopping.signal.aborted }, claimed)
      .catch((err: Error) =>
        err instanceof RunEnded
          ? log.warn({ runId: run.id }, 'a schedule run was ended by another instance meanwhile (nothing was heard of it): it stops here, its tasks left are not performed')
          : log.error({ err: err.message, runId: run.id }, 'a schedule run stopped on an error'),
      )
      // a run that ended, failed or was ended elsewhere is no longer under way here (nor marked alive)
      .finally(() => {
        this.inFlight.delete(p);
        this.underWay.delete(run.id);
      });
    this.inFlight.add(p);
    this.underWay.add(run.id);
  }
}
