/**
 * /openapi.json (repo root) is the committed OpenAPI document, printed from the code
 * (src/openapi/document.ts; also `npm run openapi`). Any change of a route, a request or response
 * schema shows as a diff of that file. This test fails when it is out of date; regenerate it with:
 *   UPDATE_OPENAPI=1 npx jest test/openapi/document.test.ts
 * It also lints the document with Redocly (zero errors and zero warnings).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApiDocument, openApiJson } from '../../src/openapi/document.js';
import { ERROR_CODES } from '../../src/openapi/responses.js';
import { operationsOf } from './contract.js';
import { expectFileCurrent } from '../support/generated-file.js';

const ROOT = path.resolve(__dirname, '../..');
const FILE = path.join(ROOT, 'openapi.json');

test('openapi.json matches the document built from the code', () => {
  const printed = openApiJson();
  expectFileCurrent(FILE, printed, 'UPDATE_OPENAPI', 'UPDATE_OPENAPI=1 npx jest test/openapi/document.test.ts  (or: npm run openapi)');
});

test('redocly lint: no errors and no warnings', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, openApiJson());
    const cli = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
    const config = path.join(ROOT, 'redocly.yaml');
    const args = [cli, 'lint', file, '--format=json', ...(existsSync(config) ? ['--config', config] : [])];
    const run = await promisify(execFile)(process.execPath, args, {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, // no network
    }).catch((e: { stdout?: string; stderr?: string }) => e);
    const out = String(run.stdout ?? '');
    const report = JSON.parse(out.slice(out.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

describe('content of the document', () => {
  const doc = buildOpenApiDocument();
  const ops = operationsOf(doc);

  test('OpenAPI 3.1, one server at the origin, full paths', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    for (const p of Object.keys(doc.paths)) expect(p === '/plants' || p.startsWith('/api/v1/')).toBe(true);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/api/agent'))).toBe(false); // internal, not documented
  });

  test('every operation: id, summary, tag, security, success status, 429 and 500, rate-limit headers', () => {
    const ids = new Set<string>();
    for (const { method, template, op } of ops) {
      const name = `${method} ${template}`;
      expect([name, typeof op.operationId]).toEqual([name, 'string']);
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      expect([name, Boolean(op.summary), op.tags?.length]).toEqual([name, true, 1]);
      expect([name, Array.isArray(op.security)]).toEqual([name, true]);
      const statuses = Object.keys(op.responses);
      // a download's range answer (206) comes with HTTP Range itself (CONTRACT §11), on that operation only
      const ranged = template.endsWith('/files/download');
      const success = statuses.filter((s) => s < '300' && !(ranged && s === '206'));
      expect([name, success.length]).toEqual([name, 1]);
      const actions = /\/(start|stop|restart|kill|reinstall|signin|files\/rename|files\/chmod|files\/decompress|backups\/\{backupId\}\/(restore|lock|unlock))$|^\/plants$/;
      const expected = method === 'DELETE' || /\/auth\/signout$|\/files\/delete$/.test(template) ? '204' : method === 'POST' && !actions.test(template) ? '201' : '200';
      expect([name, success[0]]).toEqual([name, expected]);
      expect([name, statuses.includes('429'), statuses.includes('500')]).toEqual([name, true, true]);
      // only the statuses CONTRACT §1 lists
      const allowed = ['200', '201', '204', '400', '401', '403', '404', '422', '429', '500', ...(ranged ? ['206'] : [])];
      for (const s of statuses) expect([name, s, allowed.includes(s)]).toEqual([name, s, true]);
      const headersOf = (r: any) => (r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r).headers ?? {};
      for (const s of statuses) {
        const h = Object.keys(headersOf(op.responses[s]));
        expect([name, s, h]).toEqual([name, s, expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', ...(s === '429' ? ['Retry-After'] : [])])]);
      }
      // a body that is not a JSON object is a 400 on every operation but a GET (src/http/body.ts)
      if (method !== 'GET') expect([name, statuses.includes('400')]).toEqual([name, true]);
      // endpoints that need credentials document the 401
      if (op.security.length) expect([name, statuses.includes('401')]).toEqual([name, true]);
    }
  });

  test('security schemes: bearer and the hp_session cookie', () => {
    expect(doc.components.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      sessionCookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'hp_session' }),
    });
    expect(doc.paths['/plants']!.post.security).toEqual([{ bearerAuth: [] }]);
  });

  test('the error code enum is the one of src/errors.ts; plant errors are int32', () => {
    expect(doc.components.schemas.ErrorCode.enum).toEqual([...ERROR_CODES]);
    expect(doc.components.schemas.PlantError.properties.error).toMatchObject({ type: 'integer', format: 'int32' });
    expect(doc.components.schemas.NewPlant.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
  });

  test('the decisions the contract asks to be written down are in info.description', () => {
    const d = String(doc.info.description);
    for (const s of ['MiB', 'percent of one core', 'installing', 'install_failed', 'stopping', 'page', 'limit', '60-second', 'Retry-After', 'no user enumeration', 'auth_success', 'console_output', 'install_output', 'token_expiring', 'token_expired', '4401', '/api/agent/v1'])
      expect([s, d.includes(s)]).toEqual([s, true]);
  });

  test('request bodies and list queries come from src/validation', () => {
    const body = (m: string, p: string) => doc.paths[p]![m].requestBody.content['application/json'].schema.$ref;
    expect(body('post', '/api/v1/auth/signup')).toBe('#/components/schemas/SignupInput');
    expect(body('post', '/api/v1/servers')).toBe('#/components/schemas/CreateServerInput');
    expect(body('patch', '/api/v1/servers/{id}')).toBe('#/components/schemas/UpdateServerInput');
    expect(body('post', '/plants')).toBe('#/components/schemas/NewPlant');
    const params = (doc.paths['/api/v1/servers']!.get.parameters as any[]).map((p) => p.name);
    expect(params).toEqual(['page', 'limit', 'status', 'nodeId']);
    expect(doc.components.schemas.CreateServerInput.properties.memory).toMatchObject({ type: 'integer', minimum: 64 });
  });
});
