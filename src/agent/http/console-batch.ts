/**
 * Batched console frames (`options { batch: true }`): one batcher per server gathers its lines and
 * skip counts and sends them at most every 50 ms as one `console_batch` frame, serialised once and
 * written as the same string to every batch session of that server.
 */
import type { Server } from '../server/server';
import type { ConsoleLine } from '../server/console-buffer';
import type { SkipReport } from '../server/line-budget';

import { CONSOLE_BATCH_EVERY_MS as BATCH_EVERY_MS } from '../../shared/node-protocol';

/** What a batcher needs of a session. */
export interface BatchReader {
  /** Writes a frame (the slow-client rule applies). */
  sendFrame(frame: string | Buffer): void;
  /** The batcher now sends this session its lines: it stops taking per-line frames. */
  batchStarted(): void;
}

/** A line as a batch carries it: the install script's lines have the stream `install`. */
function batchLine(e: ConsoleLine): { line: string; stream: string; ts: string; seq: number } {
  return { line: e.line, stream: e.kind === 'install' ? 'install' : e.stream, ts: e.ts, seq: e.seq };
}

/**
 * A batch frame holds at most this much line text (JSON): a burst of long lines goes out as several
 * frames, each well below what a reader accepts in one message (the panel's feed takes 1 MiB).
 */
export const MAX_BATCH_FRAME_BYTES = 256 * 1024;

/**
 * The `console_batch` frames of these lines: one, or several in order when the lines are long; the
 * skip count rides on the last. Frames are Buffers, written as they are to every batch session (text
 * frames that share one copy of their bytes, however many sockets still hold them).
 */
export function batchFrames(lines: readonly ConsoleLine[], skipped: number): Buffer[] {
  const frames: Buffer[] = [];
  let chunk: string[] = [];
  let size = 0;
  const out = (last: boolean): void => {
    frames.push(Buffer.from(`{"type":"console_batch","data":{"lines":[${chunk.join(',')}],"skipped":${last ? skipped : 0}}}`));
    chunk = [];
    size = 0;
  };
  for (const l of lines) {
    const json = JSON.stringify(batchLine(l));
    if (size > 0 && size + json.length > MAX_BATCH_FRAME_BYTES) out(false);
    chunk.push(json);
    size += json.length + 1;
  }
  out(true);
  return frames;
}

/** What a session leaving batch mode had not yet received: its per-line frames take over from here. */
export interface BatchLeftovers {
  lines: ConsoleLine[];
  skipped: number;
}

/**
 * The batcher of one server. A session that joins while a batch is gathering takes per-line frames
 * until that batch has gone out (it already has those lines), then batches: each line reaches it once.
 */
export class ConsoleBatcher {
  private readonly readers = new Set<BatchReader>();
  private readonly joining = new Set<BatchReader>();
  private lines: ConsoleLine[] = [];
  private skipped = 0;
  private lastSent = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private readonly onLine = (e: ConsoleLine): void => this.gather(() => this.lines.push(e));
  private readonly onSkipped = (r: SkipReport): void => this.gather(() => (this.skipped += r.skipped));

  constructor(private readonly server: Server) {
    server.on('console', this.onLine);
    server.on('skipped', this.onSkipped);
  }

  get size(): number {
    return this.readers.size + this.joining.size;
  }

  join(reader: BatchReader): void {
    if (this.lines.length === 0 && this.skipped === 0) {
      this.readers.add(reader);
      reader.batchStarted();
    } else this.joining.add(reader);
  }

  /** Removes a session; a batch reader gets back what the gathering batch holds for it. */
  leave(reader: BatchReader): BatchLeftovers {
    const wasReader = this.readers.delete(reader);
    this.joining.delete(reader);
    return wasReader ? { lines: [...this.lines], skipped: this.skipped } : { lines: [], skipped: 0 };
  }

  /** Stops listening to the server (its last session left). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.server.off('console', this.onLine);
    this.server.off('skipped', this.onSkipped);
  }

  private gather(add: () => void): void {
    add();
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), Math.max(0, this.lastSent + BATCH_EVERY_MS - Date.now()));
    this.timer.unref();
  }

  private flush(): void {
    this.timer = null;
    this.lastSent = Date.now();
    const frames = batchFrames(this.lines, this.skipped);
    this.lines = [];
    this.skipped = 0;
    for (const r of this.readers) for (const f of frames) r.sendFrame(f);
    for (const r of this.joining) {
      this.readers.add(r);
      r.batchStarted();
    }
    this.joining.clear();
  }
}

/** The batchers of the node's servers: one per server while it has batch sessions. */
export class ConsoleBatchers {
  private readonly byServer = new Map<Server, ConsoleBatcher>();

  join(server: Server, reader: BatchReader): ConsoleBatcher {
    let b = this.byServer.get(server);
    if (!b) {
      b = new ConsoleBatcher(server);
      this.byServer.set(server, b);
    }
    b.join(reader);
    return b;
  }

  leave(server: Server, reader: BatchReader): BatchLeftovers {
    const b = this.byServer.get(server);
    if (!b) return { lines: [], skipped: 0 };
    const left = b.leave(reader);
    if (b.size === 0) {
      b.close();
      this.byServer.delete(server);
    }
    return left;
  }
}
