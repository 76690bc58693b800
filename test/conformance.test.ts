// The conformance runner (npm run conformance) and the capture script (npm run conformance:capture) against the
// in-process service, on this run's storage (PGlite, or the PostgreSQL of DATABASE_URL): every check passes, and no
// body of the scripted sessions breaks the protocols' schemas.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { captureSessions } from '../src/conformance/capture.js';
import { runConformance } from '../src/conformance/runner.js';
import { PROTOCOL_ENV } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let lenient: TestService;
beforeAll(async () => {
  // A limit the runner's last check (A-R1) can reach in a few hundred requests; no other test here comes after it.
  api = await startTestService({ env: { ...PROTOCOL_ENV, RATE_LIMIT_PER_MINUTE: '400' } });
  lenient = await startTestService({ env: { ...PROTOCOL_ENV, UCP_PLATFORM_PROFILE_POLICY: 'lenient' } });
});
afterAll(async () => {
  await api?.close();
  await lenient?.close();
});

it('captures the scripted session on UCP REST, UCP MCP and ACP with zero schema errors', async () => {
  const lines: string[] = [];
  const result = await captureSessions({ baseUrl: api.url, log: (line) => lines.push(line) });
  expect(lines.filter((line) => !/ 0 errors$/.test(line)).slice(0, -1)).toEqual([]);
  expect(result).toMatchObject({ responses: 27, errors: 0 });
  expect([...result.scenarios.keys()]).toHaveLength(27);
});

it('passes every U- and A- check with zero schema errors (U-N5 needs the lenient policy)', async () => {
  const lines: string[] = [];
  const result = await runConformance({ baseUrl: api.url, log: (line) => lines.push(line) });
  expect(result.failures).toEqual([]);
  expect(result).toMatchObject({ fail: 0, skip: 1, schemaErrors: 0 });
  expect(lines).toContain('SKIP U-N5: the store is not in the lenient policy');
  expect(result.pass).toBeGreaterThanOrEqual(44);
  expect(lines.at(-1)).toMatch(/^\d+ pass \/ 0 fail \/ 1 skip; \d+ responses, 0 schema errors$/);
}, 120_000);

it('passes the UCP checks against a store in the lenient policy, U-N5 included', async () => {
  const lines: string[] = [];
  const result = await runConformance({
    baseUrl: lenient.url,
    protocol: 'ucp',
    lenient: true,
    log: (line) => lines.push(line),
  });
  expect(result.failures).toEqual([]);
  expect(lines).toContain('PASS U-N5');
  expect(result).toMatchObject({ fail: 0, skip: 3, schemaErrors: 0 });
}, 120_000);
