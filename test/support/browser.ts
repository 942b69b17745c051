/**
 * The browser of the end-to-end tests: Debian's Chromium (/usr/bin/chromium) through playwright-core,
 * headless, never a downloaded browser; the tests skip (and say why) when it or the built page is missing.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';
export const WEB_INDEX = path.resolve(__dirname, '../../web/dist/index.html');
export const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts/web');
/** As root, without a sandbox; no background networking (the machine has no network). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync'];

/** `describe`, or `describe.skip` with a warning naming what is missing. */
export function describeWithBrowser(file: string): jest.Describe {
  const missing = [!existsSync(WEB_INDEX) && `${WEB_INDEX} (run \`npm run build:web\`)`, !existsSync(CHROMIUM) && `${CHROMIUM} (apt-get install chromium)`].filter(Boolean);
  if (missing.length) console.warn(`${file}: browser tests skipped: missing ${missing.join(' and ')}`);
  return missing.length ? describe.skip : describe;
}
