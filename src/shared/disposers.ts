/**
 * What a start has opened, to be closed once and in reverse: each resource registers its disposer as
 * soon as it exists, so a start that fails half way closes exactly what it opened, and a stop closes
 * everything, the last opened first. A disposer that fails is logged and the others still run.
 */
export type Disposer = () => unknown;

export class Disposers {
  private readonly stack: { name: string; dispose: Disposer }[] = [];
  private running: Promise<void> | null = null;

  constructor(private readonly onError: (name: string, err: unknown) => void = () => undefined) {}

  add(name: string, dispose: Disposer): void {
    this.stack.push({ name, dispose });
  }

  /** Runs every disposer once (later calls wait for the same run). */
  disposeAll(): Promise<void> {
    this.running ??= (async () => {
      for (let d = this.stack.pop(); d; d = this.stack.pop()) {
        try {
          await d.dispose();
        } catch (err) {
          this.onError(d.name, err);
        }
      }
    })();
    return this.running;
  }
}
