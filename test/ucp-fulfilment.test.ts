// UCP's fulfillment extension (dev.ucp.shopping.fulfillment, issue #32) on both served versions, over HTTP against the
// real service and database: advertised and negotiated like discount; create and update take a shipping destination
// and the selected option; the answer carries methods, destinations, groups and options, and totals equal to the
// cent to what REST (`POST /checkout_sessions`) quotes for the same destination (the destination table); a change of
// address re-prices; an address the store does not ship to is a checkout not ready for payment naming the field,
// never a 5xx, and an update with one leaves the session as it was. Every body is validated against the version's UCP
// schemas, the fulfillment composition included (protocolFetch).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformProfile, serveProfiles, type ProfileServer } from '../src/conformance/profile.js';
import { createdSession } from './support/checkout.js';
import { ADDRESSES, DESTINATION_TABLE, regionOf, restFigures } from './support/destinations.js';
import { cartCount, PROTOCOL_ENV, protocolBodyProblems, protocolFetch, ucpHeaders } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

const VERSIONS = ['2026-08-25', '2026-04-08'] as const;
type Version = (typeof VERSIONS)[number];
const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const FULFILLMENT = 'dev.ucp.shopping.fulfillment';

/** A platform profile of `version` declaring checkout, discount and (unless told not to) fulfillment. */
function profileOf(version: string, fulfillment = true) {
  const profile = platformProfile({ version, fulfillment });
  const capabilities = JSON.parse(JSON.stringify(profile.ucp.capabilities).replaceAll('2026-04-08', version));
  return { ucp: { ...profile.ucp, capabilities } };
}

let api: TestService;
let profiles: ProfileServer;
beforeAll(async () => {
  profiles = await serveProfiles(
    Object.fromEntries(
      VERSIONS.flatMap((version) => [
        [`/${version}.json`, profileOf(version)],
        [`/${version}-without.json`, profileOf(version, false)],
      ]),
    ),
  );
  api = await startTestService({ env: PROTOCOL_ENV });
});
afterAll(async () => {
  await api?.close();
  await profiles?.close();
});

const profileUrl = (version: Version, fulfillment = true) =>
  `${profiles.base}/${version}${fulfillment ? '' : '-without'}.json`;

function send(method: string, path: string, version: Version, body?: unknown, fulfillment = true) {
  return protocolFetch(api, path, {
    method,
    headers: ucpHeaders(profileUrl(version, fulfillment)),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A destination of the table as UCP's postal address. */
function ucpAddress(destination: string, id = 'addr_1') {
  const address = ADDRESSES[destination]!;
  return {
    id,
    first_name: 'Ada',
    last_name: 'Lovelace',
    street_address: '1 Test Street',
    address_locality: address.city,
    ...(address.region ? { address_region: address.region } : {}),
    ...(address.postal_code ? { postal_code: address.postal_code } : {}),
    address_country: address.country,
  };
}

const BERLIN = {
  id: 'berlin',
  first_name: 'Erika',
  last_name: 'Mustermann',
  street_address: 'Friedrichstraße 43',
  address_locality: 'Berlin',
  postal_code: '10117',
  address_country: 'DE',
};

function lineItems(items: 1 | 2) {
  return [TWO_PACK, TRAVEL].slice(0, items).map((id) => ({ item: { id }, quantity: 1 }));
}

/** A fulfillment request: one shipping method to `destination`, with the option selected when given. */
function shipTo(destination: object, option?: string) {
  return {
    methods: [
      {
        type: 'shipping',
        destinations: [destination],
        ...(option ? { groups: [{ selected_option_id: option }] } : {}),
      },
    ],
  };
}

const amountOf = (totals: any[], type: string) => totals.find((total) => total.type === type)?.amount ?? 0;

/**
 * A checkout's figures in minor units: the tax is the `tax` entry where tax is added, or the tax lines inside the
 * total where prices include it; `taxes` by jurisdiction either way.
 */
function ucpFigures(checkout: any) {
  const totals: any[] = checkout.totals;
  const total = totals.find((entry) => entry.type === 'total');
  const taxEntry = totals.find((entry) => entry.type === 'tax');
  const taxLines: any[] = (taxEntry ?? total).lines?.filter((line: any) => line.type === 'tax') ?? [];
  return {
    subtotal: amountOf(totals, 'subtotal'),
    discount: 0 - amountOf(totals, 'items_discount') || 0,
    shipping: amountOf(totals, 'fulfillment'),
    taxes: taxLines.map((line) => line.amount),
    tax: taxEntry ? taxEntry.amount : taxLines.reduce((sum, line) => sum + line.amount, 0),
    total: total.amount,
  };
}

function expectEntriesAddUp(checkout: any) {
  const totals: any[] = checkout.totals;
  const total = totals.find((entry) => entry.type === 'total');
  const others = totals.filter((entry) => entry.type !== 'total');
  expect(others.reduce((sum, entry) => sum + entry.amount, 0)).toBe(total.amount);
  for (const entry of totals.filter((candidate) => candidate.lines))
    expect(entry.lines.reduce((sum: number, line: any) => sum + line.amount, 0)).toBe(entry.amount);
}

describe('discovery and negotiation', () => {
  it('advertises dev.ucp.shopping.fulfillment (extending checkout) at both versions', async () => {
    const latest = await protocolFetch(api, '/.well-known/ucp');
    const older = await protocolFetch(api, new URL(latest.body.ucp.supported_versions['2026-04-08']).pathname);
    for (const body of [latest.body, older.body]) {
      const [entry] = body.ucp.capabilities[FULFILLMENT];
      expect(entry).toMatchObject({
        version: body.ucp.version,
        extends: 'dev.ucp.shopping.checkout',
        schema: `https://ucp.dev/${body.ucp.version}/schemas/shopping/fulfillment.json`,
      });
    }
  });

  it.each(VERSIONS)(
    '%s: without the extension in the platform profile, fulfillment is ignored with a warning',
    async (version) => {
      const created = await send(
        'POST',
        '/ucp/checkout-sessions',
        version,
        { line_items: lineItems(1), fulfillment: shipTo(BERLIN, 'express') },
        false,
      );
      expect(created.response.status).toBe(201);
      expect(created.body.ucp.capabilities[FULFILLMENT]).toBeUndefined();
      expect(created.body.fulfillment).toBeUndefined();
      expect(created.body.messages).toContainEqual(
        expect.objectContaining({ type: 'warning', code: 'fulfillment_not_negotiated', path: '$.fulfillment' }),
      );
      // Priced as before: the default (US) market's estimate.
      expect(created.body.currency).toBe('USD');
    },
  );
});

describe.each(VERSIONS)('UCP %s fulfillment', (version) => {
  it('a German address with Express: 19 % VAT and the Express price, options offered, the option selected', async () => {
    const created = await send('POST', '/ucp/checkout-sessions', version, {
      line_items: lineItems(1),
      fulfillment: shipTo(BERLIN, 'express'),
    });
    expect(created.response.status).toBe(201);
    const checkout = created.body;
    expect(checkout.ucp.capabilities[FULFILLMENT]).toEqual([{ version }]);
    expect([checkout.status, checkout.currency]).toEqual(['requires_escalation', 'EUR']);
    const [method] = checkout.fulfillment.methods;
    expect(method).toMatchObject({
      id: 'shipping',
      type: 'shipping',
      line_item_ids: [checkout.line_items[0].id],
      selected_destination_id: 'shipping_address',
    });
    expect(method.destinations).toEqual([
      {
        id: 'shipping_address',
        ...(version === '2026-08-25' ? { type: 'shipping_address' } : {}),
        first_name: 'Erika',
        last_name: 'Mustermann',
        street_address: 'Friedrichstraße 43',
        address_locality: 'Berlin',
        postal_code: '10117',
        address_country: 'DE',
      },
    ]);
    const [group] = method.groups;
    expect(group.selected_option_id).toBe('express');
    expect(group.options.map((option: any) => [option.id, option.totals[0].amount])).toEqual([
      ['standard', 495],
      ['express', 1495],
    ]);
    // €14.51 tax included, Express €14.95: total €29.46 with 19 % VAT inside (2.32 + 2.39).
    expect(ucpFigures(checkout)).toEqual({
      subtotal: 1451,
      discount: 0,
      shipping: 1495,
      taxes: [471],
      tax: 471,
      total: 2946,
    });
    const total = checkout.totals.find((entry: any) => entry.type === 'total');
    expect(total.lines).toEqual([
      { type: 'net', display_text: 'Excluding tax', amount: 2475 },
      { type: 'tax', display_text: 'VAT (DE) 19 % (included)', amount: 471 },
    ]);
    expectEntriesAddUp(checkout);
    expect(checkout.messages.map((message: any) => message.code)).not.toContain('totals_estimated');
    // Read back as created.
    const got = await send('GET', `/ucp/checkout-sessions/${checkout.id}`, version);
    expect(got.body.fulfillment).toEqual(checkout.fulfillment);
    expect(got.body.totals).toEqual(checkout.totals);
  });

  it('a checkout without a destination is an estimate, then selecting a destination and an option re-prices it', async () => {
    const created = await send('POST', '/ucp/checkout-sessions', version, {
      line_items: lineItems(1),
      context: { address_country: 'DE' },
    });
    const checkout = created.body;
    expect(checkout.fulfillment.methods).toEqual([
      {
        id: 'shipping',
        type: 'shipping',
        line_item_ids: [checkout.line_items[0].id],
        destinations: [],
        selected_destination_id: null,
      },
    ]);
    expect(checkout.messages).toContainEqual(
      expect.objectContaining({ type: 'info', code: 'totals_estimated', path: '$.totals' }),
    );
    const path = `/ucp/checkout-sessions/${checkout.id}`;
    const line_items = [{ id: checkout.line_items[0].id, item: { id: TWO_PACK }, quantity: 1 }];
    const addressed = await send('PUT', path, version, { line_items, fulfillment: shipTo(BERLIN) });
    expect(addressed.body.fulfillment.methods[0].groups[0].selected_option_id).toBe('standard');
    expect(ucpFigures(addressed.body)).toMatchObject({ shipping: 495, taxes: [311], total: 1946 });
    // The option chosen by the group, the destination kept by its id.
    const express = await send('PUT', path, version, {
      line_items,
      fulfillment: {
        methods: [
          {
            id: 'shipping',
            line_item_ids: [checkout.line_items[0].id],
            selected_destination_id: 'shipping_address',
            groups: [{ id: 'package', selected_option_id: 'express' }],
          },
        ],
      },
    });
    expect(express.body.fulfillment.methods[0].groups[0].selected_option_id).toBe('express');
    expect(express.body.fulfillment.methods[0].destinations[0].address_country).toBe('DE');
    expect(ucpFigures(express.body)).toMatchObject({ shipping: 1495, taxes: [471], total: 2946 });
    // Another member state: the same shelf price, its own VAT.
    const dublin = await send('PUT', path, version, {
      line_items,
      fulfillment: shipTo(ucpAddress('IE'), 'express'),
    });
    expect(ucpFigures(dublin.body)).toMatchObject({ subtotal: 1451, shipping: 1495, total: 2946 });
    expect(ucpFigures(dublin.body).taxes).toEqual([(await restQuote('IE', 'express', 1, false)).taxes[0]]);
    expect(ucpFigures(dublin.body).taxes[0]).toBeGreaterThan(471);
    // Without fulfillment (the update replaces the checkout): back to the estimate.
    const cleared = await send('PUT', path, version, { line_items });
    expect(cleared.body.fulfillment.methods[0].destinations).toEqual([]);
    expect(cleared.body.messages).toContainEqual(expect.objectContaining({ code: 'totals_estimated' }));
  });

  it.each([
    ['an unknown country', { address_country: 'ZZ' }, 'address_country', 'invalid_address'],
    ['a region not in that country', { address_region: 'Texas' }, 'address_region', 'invalid_address'],
    [
      'a country the store does not ship to',
      { address_country: 'BR', postal_code: '01310-100' },
      'address_country',
      'address_undeliverable',
    ],
  ])(
    '%s: a checkout not ready for payment naming the field, on create and on update',
    async (_, change, field, code) => {
      const invalid = { ...BERLIN, ...change };
      const carts = await cartCount(api);
      const created = await send('POST', '/ucp/checkout-sessions', version, {
        line_items: lineItems(1),
        context: { address_country: 'DE' },
        fulfillment: shipTo(invalid, 'express'),
      });
      expect(created.response.status).toBe(201);
      expect(created.body.status).toBe('incomplete');
      const problem = expect.objectContaining({
        type: 'error',
        code,
        severity: 'recoverable',
        path: `$.fulfillment.methods[0].destinations[0].${field}`,
        content: expect.stringMatching(new RegExp(`^${field}: `)),
      });
      expect(created.body.messages).toContainEqual(problem);
      expect(created.body.fulfillment.methods[0].destinations).toEqual([]);
      expect(await cartCount(api)).toBe(carts + 1); // created, without the address

      // An update with it leaves the checkout exactly as it was.
      const path = `/ucp/checkout-sessions/${created.body.id}`;
      const line_items = [{ item: { id: TWO_PACK }, quantity: 1 }];
      const addressed = await send('PUT', path, version, { line_items, fulfillment: shipTo(BERLIN, 'express') });
      const row = async () => api.service.deps.db('carts').where({ id: created.body.id }).first();
      const before = await row();
      const refused = await send('PUT', path, version, {
        line_items: [{ item: { id: TWO_PACK }, quantity: 5 }],
        fulfillment: shipTo(invalid, 'standard'),
      });
      expect(refused.response.status).toBe(200);
      expect(refused.body.status).toBe('incomplete');
      expect(refused.body.messages).toContainEqual(problem);
      expect(refused.body.line_items[0].quantity).toBe(1);
      expect(refused.body.totals).toEqual(addressed.body.totals);
      expect(refused.body.fulfillment).toEqual(addressed.body.fulfillment);
      expect(await row()).toEqual(before);
      const got = await send('GET', path, version);
      expect([got.body.status, got.body.totals]).toEqual(['requires_escalation', addressed.body.totals]);
    },
  );

  it('an option that is not offered, or pickup, is a not-ready outcome at its path; nothing changes', async () => {
    const created = await send('POST', '/ucp/checkout-sessions', version, {
      line_items: lineItems(1),
      fulfillment: shipTo(BERLIN),
    });
    const path = `/ucp/checkout-sessions/${created.body.id}`;
    const line_items = [{ item: { id: TWO_PACK }, quantity: 1 }];
    const unknown = await send('PUT', path, version, { line_items, fulfillment: shipTo(BERLIN, 'overnight') });
    expect(unknown.body.status).toBe('incomplete');
    expect(unknown.body.messages).toContainEqual(
      expect.objectContaining({
        code: 'invalid_fulfillment_option',
        path: '$.fulfillment.methods[0].groups[0].selected_option_id',
      }),
    );
    expect(unknown.body.totals).toEqual(created.body.totals);
    const pickup = await send('PUT', path, version, {
      line_items,
      fulfillment: { methods: [{ type: 'pickup', line_item_ids: [] }] },
    });
    expect(pickup.body.messages).toContainEqual(
      expect.objectContaining({ code: 'fulfillment_method_unsupported', path: '$.fulfillment.methods[0].type' }),
    );
    expect(pickup.body.fulfillment).toEqual(created.body.fulfillment);
  });
});

/** REST's quote of a row of the table (`POST /checkout_sessions`), in minor units. */
async function restQuote(destination: string, option: string, items: 1 | 2, promo: boolean) {
  const address = ADDRESSES[destination]!;
  const session = await createdSession(api, {
    items: [TWO_PACK, TRAVEL].slice(0, items).map((id) => ({ id, quantity: 1 })),
    region_id: regionOf(destination),
    ...(promo ? { promo_codes: ['10OFF'] } : {}),
    shipping_address: { recipient_name: 'Ada Lovelace', line1: '1 Test Street', ...address },
    shipping_option: option,
  });
  return restFigures(session);
}

describe('the destination table over UCP REST, to the cent as REST quotes it', () => {
  it.each(DESTINATION_TABLE)(
    '%s, %s shipping, %i item(s), 10OFF %s',
    async (destination, option, items, promo, subtotal, discount, shipping, taxes, total) => {
      const expected = { subtotal, discount, shipping, taxes, tax: taxes.reduce((sum, tax) => sum + tax, 0), total };
      const rest = await restQuote(destination, option, items, promo);
      expect(rest).toEqual(expected);
      // Both versions: 2026-04-08 for even rows' regions, 2026-08-25 for odd ones would halve the work, but each row
      // is cheap enough to take both.
      for (const version of VERSIONS) {
        const created = await send('POST', '/ucp/checkout-sessions', version, {
          line_items: lineItems(items),
          ...(promo ? { discounts: { codes: ['10OFF'] } } : {}),
          fulfillment: shipTo(ucpAddress(destination), option),
        });
        expect(created.response.status).toBe(201);
        expect(created.body.fulfillment.methods[0].groups[0].selected_option_id).toBe(option);
        expect(ucpFigures(created.body), version).toEqual(rest);
        expectEntriesAddUp(created.body);
      }
    },
  );
});

/** One tools/call on /ucp/mcp: the tool's structured result (a UCP checkout, validated), or the JSON-RPC body. */
async function mcpCall(name: string, args: Record<string, unknown>) {
  const response = await api.http('/ucp/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await response.json()) as any;
  const checkout = body.result?.structuredContent;
  expect(checkout, JSON.stringify(body).slice(0, 600)).toBeDefined();
  expect(protocolBodyProblems('/ucp/checkout-sessions', 200, checkout)).toEqual([]);
  return checkout;
}

describe('/ucp/mcp takes the same fulfillment', () => {
  it.each(VERSIONS)('%s: create_checkout and update_checkout with a destination and an option', async (version) => {
    const meta = () => ({ 'ucp-agent': { profile: profileUrl(version) }, 'idempotency-key': randomUUID() });
    const created = await mcpCall('create_checkout', {
      meta: meta(),
      checkout: { line_items: lineItems(1), fulfillment: shipTo(BERLIN, 'express') },
    });
    expect(created.ucp.version).toBe(version);
    expect(ucpFigures(created)).toMatchObject({ shipping: 1495, taxes: [471], total: 2946 });
    const updated = await mcpCall('update_checkout', {
      meta: meta(),
      id: created.id,
      checkout: { line_items: lineItems(1), fulfillment: shipTo({ ...BERLIN, address_country: 'ZZ' }) },
    });
    expect(updated.status).toBe('incomplete');
    expect(updated.messages).toContainEqual(
      expect.objectContaining({ path: '$.fulfillment.methods[0].destinations[0].address_country' }),
    );
    expect(updated.totals).toEqual(created.totals);
  });
});
