#!/usr/bin/env node
// storefront-conformance URL [--fixture FILE] [--json FILE] [--junit FILE] [--protocol ucp|acp] [--lenient]
//                           [--profile-url URL] [--store-specific] [--timeout-ms N]
//                           [--order-id ID [--order-profile URL] [--order-checkout ID]] [--order-events SECONDS]
// (also `npm run conformance -- --base-url URL …`). Exit code: 0 when no check failed, 1 when one did, 2 for bad usage.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readFixture } from './fixture.js';
import { junitXml } from './report.js';
import { runConformance } from './runner.js';

const USAGE = `usage: storefront-conformance URL [options]     (or: npm run conformance -- --base-url URL [options])

Tests a UCP and/or ACP merchant: discovers /.well-known/ucp and /.well-known/acp.json, then runs the protocol checks
of every advertised capability on every advertised transport. Docs: docs/conformance.md.

  --fixture FILE     merchant fixture (items, promo_codes, buyer, address, acp credentials); all keys optional
  --json FILE        write the report as JSON
  --junit FILE       write the report as JUnit XML
  --protocol P       ucp or acp only
  --lenient          the merchant proceeds without a usable platform profile (skips the refused-profile checks)
  --profile-url URL  a platform profile the merchant can fetch (default: served by the runner on 127.0.0.1)
  --order-id ID      a UCP order made through a paid checkout: its read, totals and events are checked
  --order-profile U  the platform profile URL the order was made under (default: the runner's own)
  --order-checkout C the checkout id that became the order (its checkout_id must be it)
  --order-events S   receive UCP order events: the runner's profile declares a webhook_url it serves; it waits up to
                     S seconds for the events of an order made under that profile (the URL is printed) and verifies them
  --store-specific   also check this storefront's exact figures (its own tests)
  --timeout-ms N     per-request timeout (default 15000)`;

function usage(message?: string): never {
  if (message) console.error(message);
  console.error(USAGE);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      fixture: { type: 'string' },
      json: { type: 'string' },
      junit: { type: 'string' },
      protocol: { type: 'string' },
      lenient: { type: 'boolean', default: false },
      'profile-url': { type: 'string' },
      'store-specific': { type: 'boolean', default: false },
      'timeout-ms': { type: 'string' },
      'order-id': { type: 'string' },
      'order-profile': { type: 'string' },
      'order-checkout': { type: 'string' },
      'order-events': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (error) {
  usage((error as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const baseUrl = values['base-url'] ?? positionals[0];
if (!baseUrl || !URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
  usage(baseUrl ? `not an http(s) URL: ${baseUrl}` : 'the merchant URL is missing');
if (values.protocol !== undefined && values.protocol !== 'ucp' && values.protocol !== 'acp')
  usage(`--protocol is ucp or acp, not ${values.protocol}`);
const timeoutMs = values['timeout-ms'] === undefined ? undefined : Number(values['timeout-ms']);
if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0))
  usage('--timeout-ms is a positive integer');

const orderEventsSeconds = values['order-events'] === undefined ? undefined : Number(values['order-events']);
if (orderEventsSeconds !== undefined && !(Number.isInteger(orderEventsSeconds) && orderEventsSeconds > 0))
  usage('--order-events is a positive number of seconds');

const notes: string[] = [];
let fixture;
try {
  fixture = values.fixture ? readFixture(values.fixture, notes) : undefined;
} catch (error) {
  usage((error as Error).message);
}
if (values['order-id'])
  fixture = {
    ...fixture,
    ucp: {
      order_id: values['order-id'],
      ...(values['order-profile'] ? { profile: values['order-profile'] } : {}),
      ...(values['order-checkout'] ? { checkout_id: values['order-checkout'] } : {}),
    },
  };
else if (values['order-profile'] || values['order-checkout'])
  usage('--order-profile and --order-checkout go with --order-id');
for (const note of notes) console.log(`NOTE ${note}`);

const report = await runConformance({
  baseUrl,
  fixture,
  protocol: values.protocol as 'ucp' | 'acp' | undefined,
  lenient: values.lenient,
  profileUrl: values['profile-url'],
  storeSpecific: values['store-specific'],
  timeoutMs,
  orderEventsSeconds,
});
report.notes.unshift(...notes);
if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
if (values.junit) writeFileSync(values.junit, junitXml(report));
process.exit(report.summary.fail === 0 ? 0 : 1);
