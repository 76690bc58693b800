// The conformance runner (npm run conformance) and the capture script (npm run conformance:capture) against the
// in-process service, on this run's storage (PGlite, or the PostgreSQL of DATABASE_URL): every check passes, and no
// body of the scripted sessions breaks the protocols' schemas.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { captureSessions } from '../src/conformance/capture.js';
import { runConformance } from '../src/conformance/runner.js';
import { PROTOCOL_ENV } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService({ env: PROTOCOL_ENV });
});
afterAll(async () => {
  await api?.close();
});

it('passes every U- and A- check with zero schema errors', async () => {
  const lines: string[] = [];
  const result = await runConformance({ baseUrl: api.url, log: (line) => lines.push(line) });
  expect(result.failures).toEqual([]);
  expect(result).toMatchObject({ fail: 0, skip: 0, schemaErrors: 0 });
  expect(result.pass).toBeGreaterThanOrEqual(28);
  expect(lines.at(-1)).toMatch(/^\d+ pass \/ 0 fail \/ 0 skip; \d+ responses, 0 schema errors$/);
}, 120_000);

it('captures the scripted session on UCP REST, UCP MCP and ACP with zero schema errors', async () => {
  const lines: string[] = [];
  const result = await captureSessions({ baseUrl: api.url, log: (line) => lines.push(line) });
  expect(lines.filter((line) => !/ 0 errors$/.test(line)).slice(0, -1)).toEqual([]);
  expect(result).toMatchObject({ responses: 27, errors: 0 });
  expect([...result.scenarios.keys()]).toHaveLength(27);
});
