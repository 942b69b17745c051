/**
 * Tests that need the machine's Redis (REDIS_URL): without it they are skipped, and the file says so
 * and why on the console (global-setup also lists them once per run).
 */
export function redisOnly(file: string, whyRedis: string): { redisUrl: string; describeRedis: jest.Describe } {
  const url = process.env.REDIS_URL;
  if (!url) console.warn(`SKIPPED ${file}: REDIS_URL is not set, so there is no Redis ${whyRedis}.`);
  // Jest still runs a skipped describe's body to collect its tests: without Redis, the URL is one that
  // parses but is never connected to (only hooks and tests connect, and they do not run)
  return { redisUrl: url ?? 'redis://redis-url-not-set.invalid:6379', describeRedis: url ? describe : describe.skip };
}
