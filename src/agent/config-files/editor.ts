/**
 * Runs the edits of configuration files in threads of their own (edit-thread.ts): a server's file,
 * however large or hostile, never holds the agent's event loop. The agent keeps one thread ready,
 * its parsers loaded (EditThreads): a start edits its files in it and gives it back, and starts at
 * the same time get threads of their own. The edits of one start share EDIT_BUDGET_MS of their
 * thread's time and THREAD_LIMITS of memory: an edit that is not done by then ends the thread (a new
 * one is readied), and that file and the start's remaining ones are left as they are.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { childLogger } from '../../logger';
import { compiledSourceDir } from '../filesystem/workers';
import type { ConfigParser } from '../../shared/config-files';
import { ConfigParseError } from './errors';

const log = childLogger('agent');

export const EDIT_BUDGET_MS = 500;
const THREAD_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };

export interface EditJob {
  parser: ConfigParser;
  text: string;
  entries: [key: string, value: string][];
}
export type EditAnswer = { text: string } | { error: string; unparsable: boolean };

const BUDGET = `the configuration files of a start get ${EDIT_BUDGET_MS} ms together`;
const TOO_SLOW = `it takes too long to edit (${BUDGET})`;
const NO_TIME_LEFT = `no time is left to edit it (${BUDGET})`;

/** The agent's threads: one kept ready for the next start, from the agent's start on. */
export class EditThreads {
  private idle: Promise<Worker> | null = startThread();
  private closed = false;

  /** The editor of one start's files: the ready thread, or a new one while another start has it. */
  forStart(): ConfigEditor {
    const thread = this.idle ?? startThread();
    this.idle = null;
    return new ConfigEditor(thread, (back) => this.giveBack(back));
  }

  close(): void {
    this.closed = true;
    endThread(this.idle);
    this.idle = null;
  }

  /** A start's thread (null: it was ended) is kept ready when none is; otherwise ended. */
  private giveBack(thread: Promise<Worker> | null): void {
    if (this.closed || this.idle) return endThread(thread);
    this.idle = thread ?? startThread();
  }
}

export class ConfigEditor {
  private leftMs = EDIT_BUDGET_MS;

  constructor(
    private thread: Promise<Worker> | null,
    private readonly done: (thread: Promise<Worker> | null) => void,
  ) {}

  /** Throws when the start's time for edits is used up (a file is not even read then). */
  checkTime(): void {
    if (this.leftMs <= 0) throw new Error(NO_TIME_LEFT);
  }

  /** The new text; throws ConfigParseError for a file that does not parse, Error when it cannot be edited. */
  async edit(job: EditJob): Promise<string> {
    this.checkTime();
    const thread = await this.ready();
    const started = Date.now(); // a thread's start-up is not the file's doing
    const answer = await ask(thread, job, this.leftMs)
      .catch((err: Error) => {
        this.thread = null;
        throw err;
      })
      .finally(() => (this.leftMs -= Date.now() - started));
    if (answer === 'late') {
      this.leftMs = 0;
      endThread(this.thread);
      this.thread = null;
      throw new Error(TOO_SLOW);
    }
    if ('text' in answer) return answer.text;
    throw answer.unparsable ? new ConfigParseError(answer.error) : new Error(answer.error);
  }

  private async ready(): Promise<Worker> {
    try {
      return await (this.thread ??= startThread());
    } catch (err) {
      this.thread = null;
      throw err;
    }
  }

  /** Gives the thread back (to the agent's EditThreads). */
  close(): void {
    this.done(this.thread);
    this.thread = null;
  }
}

/** Ends a thread; one busy in a parser's native code (JSON.parse) ends when that returns. */
function endThread(thread: Promise<Worker> | null): void {
  thread?.then((t) => t.terminate()).catch(() => undefined);
}

/** A thread with its parsers loaded. */
function startThread(): Promise<Worker> {
  const thread = new Worker(path.join(compiledSourceDir(), 'agent', 'config-files', 'edit-thread.js'), { resourceLimits: THREAD_LIMITS });
  thread.unref();
  thread.on('error', (err) => log.warn({ err: err.message }, 'the thread editing configuration files failed'));
  const ready = new Promise<Worker>((resolve, reject) => {
    thread.once('message', () => {
      thread.off('error', reject);
      resolve(thread);
    });
    thread.once('error', reject);
  });
  ready.catch(() => undefined); // a thread that fails to start is the first edit's error
  return ready;
}

/** The thread's answer to `job`, or 'late' when it takes longer than `ms`; throws when the thread fails. */
function ask(thread: Worker, job: EditJob, ms: number): Promise<EditAnswer | 'late'> {
  return new Promise((resolve, reject) => {
    const settle = (then: () => void) => {
      clearTimeout(timer);
      thread.off('message', onAnswer).off('error', onError).off('exit', onExit);
      then();
    };
    const onAnswer = (answer: EditAnswer) => settle(() => resolve(answer));
    const onError = (err: Error & { code?: string }) =>
      settle(() => reject(new Error(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'it is too large to edit' : err.message)));
    const onExit = () => settle(() => reject(new Error('its editing stopped')));
    const timer = setTimeout(() => settle(() => resolve('late')), ms);
    thread.on('message', onAnswer).on('error', onError).on('exit', onExit);
    thread.postMessage(job);
  });
}
