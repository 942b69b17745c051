import { mkdirSync, readFileSync, renameSync, writeFileSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { childLogger } from '../../logger';
import type { PersistedServer } from './server';

const log = childLogger('agent');

interface StateFile {
  version: 1;
  savedAt: string;
  servers: Record<string, PersistedServer>;
}

/** `<dataDir>/agent/state.json`: written atomically (tmp + rename), coalescing bursts of changes. */
export class StateStore {
  private pending: (() => Record<string, PersistedServer>) | null = null;
  private writing: Promise<void> | null = null;

  constructor(private readonly file: string) {}

  load(): Record<string, PersistedServer> {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<StateFile>;
      if (parsed && typeof parsed === 'object' && parsed.servers && typeof parsed.servers === 'object') return parsed.servers;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ err: (e as Error).message, file: this.file }, 'could not read agent state file; starting empty');
    }
    return {};
  }

  /** Schedules a save of the snapshot returned by `collect` (called when the write happens). */
  save(collect: () => Record<string, PersistedServer>): void {
    this.pending = collect;
    if (!this.writing) this.writing = this.loop().finally(() => (this.writing = null));
  }

  private async loop(): Promise<void> {
    while (this.pending) {
      const collect = this.pending;
      this.pending = null;
      const body = this.serialize(collect());
      try {
        await fsp.mkdir(path.dirname(this.file), { recursive: true });
        const tmp = `${this.file}.${process.pid}.tmp`;
        await fsp.writeFile(tmp, body, { mode: 0o600 });
        await fsp.rename(tmp, this.file);
      } catch (e) {
        log.error({ err: (e as Error).message }, 'could not write agent state file');
      }
    }
  }

  /** Waits for pending writes, then writes `servers` synchronously (shutdown). */
  async flush(collect: () => Record<string, PersistedServer>): Promise<void> {
    this.pending = null;
    if (this.writing) await this.writing;
    mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, this.serialize(collect()), { mode: 0o600 });
    renameSync(tmp, this.file);
  }

  private serialize(servers: Record<string, PersistedServer>): string {
    const file: StateFile = { version: 1, savedAt: new Date().toISOString(), servers };
    return JSON.stringify(file, null, 2);
  }
}
