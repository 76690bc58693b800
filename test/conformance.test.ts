// The conformance runner (npm run conformance) against the in-process service, on this run's storage (PGlite, or the
// PostgreSQL of DATABASE_URL): every check passes and no body breaks the protocols' schemas.
import { afterAll, beforeAll, expect, it } from 'vitest';
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
