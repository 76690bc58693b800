// The conformance runner against merchants it has never seen (test/support/foreign-merchant.ts: plain node:http, other
// items, prices, currencies, paths and versions): a conformant one passes every check, each planted defect is named by
// its check and by nothing else, and a merchant lacking a protocol, a credential or a known version is reported, never
// crashed on. Also the bin (storefront-conformance) as a user runs it: exit codes, JSON and JUnit reports.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseFixture, type Fixture } from '../src/conformance/fixture.js';
import type { Report } from '../src/conformance/report.js';
import { runConformance } from '../src/conformance/runner.js';
import {
  BIKE_SHOP,
  startForeignMerchant,
  TEA_SHOP,
  type ForeignMerchant,
  type MerchantDefect,
  type MerchantOptions,
} from './support/foreign-merchant.js';
import { projectPath } from '../src/paths.js';

// A limit, not an expectation: generous so a loaded machine does not fail a check (the runner's default is 15 s).
const REQUEST_LIMIT_MS = 60_000;

const open: ForeignMerchant[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((merchant) => merchant.close()));
});

async function merchant(options: MerchantOptions): Promise<ForeignMerchant> {
  const started = await startForeignMerchant(options);
  open.push(started);
  return started;
}

const TEA_FIXTURE: Fixture = {
  promo_codes: { valid: ['SPRING15'], invalid: ['WINTER99'] },
  buyer: { email: 'kim@example.org', first_name: 'Kim', last_name: 'Lee' },
  address: { street_address: '12 Leaf Lane', address_locality: 'Leeds', postal_code: 'LS1 1AA', address_country: 'GB' },
  acp: { client_id: 'runner', client_secret: 'tea-secret', token_url: '/auth/token', scope: 'checkout' },
};
const BIKE_FIXTURE: Fixture = {
  items: [{ id: 'SKU-TUBE-700', quantity: 3 }],
  promo_codes: { valid: ['RIDE10'] },
  address: {
    street_address: '5 Spoke Street',
    address_locality: 'Utrecht',
    postal_code: '3511 AA',
    address_country: 'NL',
  },
  acp: { bearer_token: 'bike-token' },
};

async function run(url: string, fixture: Fixture, extra: { lenient?: boolean } = {}): Promise<Report> {
  return runConformance({ baseUrl: url, fixture, log: () => undefined, timeoutMs: REQUEST_LIMIT_MS, ...extra });
}

const outcomes = (report: Report, outcome: 'pass' | 'fail' | 'skip') =>
  report.checks
    .filter((check) => check.outcome === outcome)
    .map((check) => `${check.id}${check.transport ? ` ${check.transport}` : ''}`);

describe('a conformant merchant', () => {
  it('passes every check on both transports and both protocols, its items found through catalog search', async () => {
    const tea = await merchant(TEA_SHOP);
    const report = await run(tea.url, TEA_FIXTURE);
    expect(report.checks.filter((check) => check.outcome !== 'pass')).toEqual([]);
    expect(report.plans).toMatchObject([
      { protocol: 'ucp', advertised: ['2026-04-08', '2026-01-11'], tested: '2026-04-08' },
      { protocol: 'acp', advertised: ['2026-04-17'], tested: '2026-04-17' },
    ]);
    expect(report.summary).toMatchObject({ fail: 0, skip: 0, schemaErrors: 0 });
    // It does not advertise dev.ucp.shopping.order: no order check runs (as for any capability not advertised).
    expect(report.checks.filter((check) => check.id.startsWith('ucp.order.'))).toEqual([]);
    // Every advertised transport and capability was exercised.
    for (const id of [
      'ucp.checkout.create rest',
      'ucp.checkout.create mcp',
      'ucp.mcp.tools mcp',
      'ucp.catalog.search rest',
    ])
      expect(outcomes(report, 'pass')).toContain(id);
    expect(outcomes(report, 'pass')).toContain('acp.discount.valid-code rest');
    expect(tea.requests).toContain('POST /api/ucp/v1/catalog/search');
    expect(tea.requests.filter((line) => line.startsWith('POST /api/ucp/mcp')).length).toBeGreaterThan(10);
  }, 120_000);
});

describe('a merchant with planted defects', () => {
  const cases: Array<[MerchantDefect, string]> = [
    ['ucp-unknown-item-404', 'ucp.checkout.unknown-item rest'],
    ['ucp-idempotency-no-conflict', 'ucp.checkout.idempotency rest'],
    ['ucp-total-off-by-one', 'ucp.checkout.totals rest'],
    ['ucp-idempotency-key-optional', 'ucp.rest.idempotency-key-required rest'],
    ['ucp-discount-not-negotiated', 'ucp.negotiation.intersection rest'],
    ['acp-cancel-twice-200', 'acp.checkout.cancel rest'],
    ['acp-no-replayed-header', 'acp.checkout.idempotency rest'],
    ['acp-invalid-code-not-rejected', 'acp.discount.invalid-code rest'],
  ];

  it('passes everything without its defects', async () => {
    const bike = await merchant(BIKE_SHOP);
    const report = await run(bike.url, BIKE_FIXTURE);
    expect(outcomes(report, 'fail')).toEqual([]);
    expect(outcomes(report, 'skip')).toEqual([]);
  }, 120_000);

  it.each(cases)(
    '%s is named by %s and by no other check',
    async (defect, check) => {
      const bike = await merchant({ ...BIKE_SHOP, defects: [defect] });
      const report = await run(bike.url, BIKE_FIXTURE);
      expect(outcomes(report, 'fail')).toEqual([check]);
      const failed = report.checks.find((result) => result.outcome === 'fail')!;
      expect(failed.message).toMatch(/^expected .+, got /);
      expect(failed.spec).toMatch(/^(UCP|ACP) 2026-0/);
    },
    120_000,
  );

  it('names every defect at once, each by its own check', async () => {
    const bike = await merchant({ ...BIKE_SHOP, defects: cases.map(([defect]) => defect) });
    const report = await run(bike.url, BIKE_FIXTURE);
    expect(outcomes(report, 'fail').sort()).toEqual(cases.map(([, check]) => check).sort());
  }, 120_000);
});

describe('a merchant lacking a protocol, a credential or a known version', () => {
  it('skips ACP with the reason when the fixture has no credentials, and never counts a skip as a pass', async () => {
    const tea = await merchant(TEA_SHOP);
    const report = await run(tea.url, { promo_codes: TEA_FIXTURE.promo_codes });
    const acp = report.checks.filter((check) => check.protocol === 'acp');
    expect(acp.filter((check) => check.outcome === 'fail')).toEqual([]);
    // The 401 check needs no credentials; the others say what is missing.
    expect(acp.find((check) => check.id === 'acp.auth.required')?.outcome).toBe('pass');
    const skipped = acp.filter((check) => check.outcome === 'skip');
    expect(skipped.length).toBeGreaterThan(5);
    for (const check of skipped) expect(check.message).toMatch(/fixture has no acp credentials/);
    expect(report.summary.pass + report.summary.fail + report.summary.skip).toBe(report.summary.total);
    expect(report.summary.fail).toBe(0);
  }, 120_000);

  it('skips a protocol the merchant does not offer, and the items checks when there are no items', async () => {
    const bike = await merchant({ ...BIKE_SHOP, acp: undefined });
    const report = await run(bike.url, { acp: { bearer_token: 'x' } });
    expect(report.plans.find((plan) => plan.protocol === 'acp')?.reason).toMatch(
      /answers 404: the merchant does not offer it/,
    );
    expect(outcomes(report, 'fail')).toEqual([]);
    const create = report.checks.find((check) => check.id === 'ucp.checkout.create');
    expect(create).toMatchObject({ outcome: 'skip' });
    expect(create?.message).toMatch(/no items and the merchant advertises no UCP catalog search/);
  }, 120_000);

  it('states a version it has no schemas for up front and skips that protocol, without crashing', async () => {
    const old = await merchant({
      ...TEA_SHOP,
      ucp: { ...TEA_SHOP.ucp!, version: '2026-01-11', olderVersions: [] },
      acp: { ...TEA_SHOP.acp!, version: '2025-09-29' },
    });
    const lines: string[] = [];
    const report = await runConformance({
      baseUrl: old.url,
      fixture: TEA_FIXTURE,
      timeoutMs: REQUEST_LIMIT_MS,
      log: (line) => lines.push(line),
    });
    expect(lines.slice(1, 3)).toEqual([
      'UCP: merchant advertises 2026-01-11; this runner has schemas for 2026-08-25, 2026-04-08; not tested: version mismatch: the merchant speaks 2026-01-11, this runner knows 2026-08-25, 2026-04-08',
      'ACP: merchant advertises 2025-09-29; this runner has schemas for 2026-04-17; not tested: version mismatch: the merchant speaks 2025-09-29, this runner knows 2026-04-17',
    ]);
    expect(report.summary).toMatchObject({ pass: 0, fail: 0 });
    expect(report.summary.skip).toBe(report.summary.total);
  }, 120_000);

  it('fails the checks of a merchant that does not answer, one by one, without crashing', async () => {
    const gone = await merchant(BIKE_SHOP);
    await gone.close();
    open.splice(open.indexOf(gone), 1);
    const report = await run(gone.url, BIKE_FIXTURE);
    expect(report.checks.map((check) => [check.id, check.outcome])).toEqual([
      ['discovery.ucp.profile', 'fail'],
      ['discovery.acp.document', 'fail'],
      ...report.checks.slice(2).map((check) => [check.id, 'skip']),
    ]);
    expect(report.checks[0]!.message).toMatch(
      /^expected 200 with a JSON business profile, got .*fetch failed|ECONNREFUSED/,
    );
  }, 120_000);
});

describe('the merchant fixture', () => {
  it('keeps the known keys, ignores unknown ones, and drops a key of the wrong shape with a note', () => {
    const notes: string[] = [];
    const fixture = parseFixture(
      {
        items: [{ id: 'a', quantity: 2 }, { id: 'b' }],
        promo_codes: { valid: ['A'], invalid: 'B' },
        buyer: { email: 'x@example.org', age: 3 },
        address: { address_country: 'FR', planet: 'Earth' },
        acp: { client_id: 'c' },
        ucp: { order_id: 'order_1', profile: 'https://platform.example/ucp.json', paid: true },
        shipping: { express: true },
      },
      notes,
    );
    expect(fixture).toEqual({
      items: [{ id: 'a', quantity: 2 }],
      promo_codes: { valid: ['A'] },
      buyer: { email: 'x@example.org' },
      address: { address_country: 'FR' },
      ucp: { order_id: 'order_1', profile: 'https://platform.example/ucp.json' },
    });
    expect(notes).toEqual([
      'fixture: acp is neither {bearer_token} nor {client_id, client_secret, token_url, scope}, ignored',
    ]);
    expect(parseFixture({ items: 'all' }, notes)).toEqual({});
    expect(notes.at(-1)).toBe('fixture: items is not a list of {id, quantity ≥ 1}, ignored');
    expect(parseFixture({ ucp: { profile: 'https://platform.example/ucp.json' } }, notes)).toEqual({});
    expect(notes.at(-1)).toBe('fixture: ucp is not {order_id, profile?, checkout_id?}, ignored');
  });
});

describe('the storefront-conformance bin', () => {
  const bin = () => JSON.parse(readFileSync(projectPath('package.json'), 'utf8')).bin['storefront-conformance'];
  const spawnBin = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const limit = args.length ? ['--timeout-ms', String(REQUEST_LIMIT_MS)] : [];
      const child = spawn(process.execPath, [projectPath(bin()), ...args, ...limit], { cwd: projectPath() });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('exits 0 on a conformant merchant and writes JSON and JUnit reports', async () => {
    const tea = await merchant(TEA_SHOP);
    const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
    writeFileSync(join(dir, 'fixture.json'), JSON.stringify({ ...TEA_FIXTURE, unknown_key: { ignored: true } }));
    const { code, stdout } = await spawnBin([
      tea.url,
      '--fixture',
      join(dir, 'fixture.json'),
      '--json',
      join(dir, 'report.json'),
      '--junit',
      join(dir, 'report.xml'),
    ]);
    expect(stdout).toContain(
      'UCP: merchant advertises 2026-04-08, 2026-01-11; this runner has schemas for 2026-08-25, 2026-04-08; testing 2026-04-08',
    );
    expect(stdout).toMatch(/\n\d+ pass \/ 0 fail \/ 0 skip \(of \d+\); \d+ responses, 0 schema errors\n$/);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
    expect(report.summary.fail).toBe(0);
    const xml = readFileSync(join(dir, 'report.xml'), 'utf8');
    expect(xml).toContain(
      `<testsuites name="storefront-conformance ${tea.url}" tests="${report.summary.total}" failures="0" skipped="0">`,
    );
    expect(xml.match(/<testcase /g)).toHaveLength(report.summary.total);
  }, 120_000);

  it('exits 1 naming the failed check, expected and got, and its spec section; JUnit marks the failure and skips', async () => {
    const bike = await merchant({ ...BIKE_SHOP, defects: ['acp-cancel-twice-200'] });
    const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
    writeFileSync(join(dir, 'fixture.json'), JSON.stringify({ items: BIKE_FIXTURE.items, acp: BIKE_FIXTURE.acp }));
    const { code, stdout } = await spawnBin([
      bike.url,
      '--fixture',
      join(dir, 'fixture.json'),
      '--junit',
      join(dir, 'report.xml'),
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /FAIL acp\.checkout\.cancel \(acp checkout rest\): .*\n {5}expected 405 \(not cancelable: already canceled\), got 200 \{"id":"cs_.*\n {5}spec: ACP 2026-04-17, openapi\.agentic_checkout\.yaml › POST \/checkout_sessions\/\{checkout_session_id\}\/cancel/,
    );
    const xml = readFileSync(join(dir, 'report.xml'), 'utf8');
    expect(xml).toMatch(
      /<testcase classname="acp\.checkout\.rest" name="acp\.checkout\.cancel: [^"]*" time="[\d.]+">\n {6}<failure message="expected 405/,
    );
    expect(xml).toMatch(/<skipped message="the fixture has no promo_codes.valid"\/>/);
  }, 120_000);

  it('exits 2 with the usage on a missing URL', async () => {
    const { code, stderr } = await spawnBin([]);
    expect(code).toBe(2);
    expect(stderr).toContain('usage: storefront-conformance URL');
  }, 60_000);
});
