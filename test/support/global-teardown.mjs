import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  const e = globalThis.__EMBEDDED_PG__;
  if (!e) return;
  await e.pg.stop();
  rmSync(e.base, { recursive: true, force: true });
}
