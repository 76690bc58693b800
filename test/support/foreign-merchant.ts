// Small independent merchants for the conformance runner's tests: plain node:http, nothing imported from src/, with
// their own items, prices, currency, paths and versions, written from the protocols' texts (UCP checkout, discount,
// catalog search over REST and MCP; ACP checkout with the discount extension). A merchant can be told to break
// chosen rules (`defects`), each of which one check of the runner must name, and to lack a protocol.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = any;

/** The rules a merchant can be told to break; each is named by exactly one check of the runner. */
export type MerchantDefect =
  /** An unknown item is a 404, not a 200 with an error message (ucp.checkout.unknown-item). */
  | 'ucp-unknown-item-404'
  /** A reused Idempotency-Key with another body replays the first answer instead of a 409 (ucp.checkout.idempotency). */
  | 'ucp-idempotency-no-conflict'
  /**
   * The total of a checkout without a shipping destination is one minor unit more than its entries
   * (ucp.checkout.totals; a shipped checkout's totals are ucp.fulfillment.totals', left sound so one check names it).
   */
  | 'ucp-total-off-by-one'
  /** A create without Idempotency-Key is accepted (ucp.rest.idempotency-key-required). */
  | 'ucp-idempotency-key-optional'
  /** Discounts are applied even when the platform did not negotiate the discount capability (ucp.negotiation.intersection). */
  | 'ucp-discount-not-negotiated'
  /** A second cancel answers 200 instead of 405 (acp.checkout.cancel). */
  | 'acp-cancel-twice-200'
  /** A replay omits Idempotent-Replayed: true (acp.checkout.idempotency). */
  | 'acp-no-replayed-header'
  /** An invalid code is dropped silently, not listed in discounts.rejected (acp.discount.invalid-code). */
  | 'acp-invalid-code-not-rejected';

export interface MerchantItem {
  id: string;
  title: string;
  /** In minor units of the merchant's currency. */
  price: number;
}

export interface MerchantOptions {
  items: MerchantItem[];
  /** Upper-case ISO 4217 (UCP); ACP gets it lower-cased. */
  currency: string;
  /** code → percent off. */
  codes: Record<string, number>;
  /** Tax in basis points of the discounted subtotal. */
  taxBasisPoints: number;
  ucp?: {
    version: string;
    /** Older versions with profiles of their own (business_schema.supported_versions); this merchant serves none. */
    olderVersions?: string[];
    restPath?: string;
    mcpPath?: string;
    catalog?: boolean;
    discount?: boolean;
    /** The fulfillment extension (dev.ucp.shopping.fulfillment): shipping to a destination, options to choose. */
    fulfillment?: boolean;
    /** MCP answers as a text/event-stream (as streamable-HTTP servers may), not a JSON body. */
    mcpEventStream?: boolean;
  };
  acp?: {
    version: string;
    path: string;
    /** A static bearer token, or an OAuth client-credentials client with its token path. */
    bearerToken?: string;
    client?: { id: string; secret: string; tokenPath: string };
    discount?: boolean;
  };
  defects?: MerchantDefect[];
}

export interface ForeignMerchant {
  url: string;
  /** Requests received, by method and path (for tests that a runner asked nothing it should not). */
  requests: string[];
  close(): Promise<void>;
}

const PUBLIC_ORIGIN = 'https://merchant.example';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Json,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status}`);
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A body's fingerprint for idempotency: key order and number spelling do not matter. */
function fingerprint(value: unknown): string {
  const canonical = (entry: unknown): unknown =>
    Array.isArray(entry)
      ? entry.map(canonical)
      : entry && typeof entry === 'object'
        ? Object.fromEntries(
            Object.keys(entry)
              .sort()
              .map((key) => [key, canonical((entry as Record<string, unknown>)[key])]),
          )
        : entry;
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}

export async function startForeignMerchant(options: MerchantOptions): Promise<ForeignMerchant> {
  const defects = new Set(options.defects ?? []);
  const requests: string[] = [];
  const itemsById = new Map(options.items.map((item) => [item.id, item]));
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_${(++counter).toString(36).padStart(4, '0')}`;
  const ucpRest = options.ucp ? (options.ucp.restPath ?? null) : null;
  const ucpMcp = options.ucp ? (options.ucp.mcpPath ?? null) : null;

  // ---------- pricing, shared by both protocols ----------
  /** The countries this merchant ships to (ISO 3166-1 alpha-2). */
  const SHIPS_TO = new Set(['US', 'CA', 'GB', 'DE', 'FR', 'NL', 'JP']);
  interface Line {
    id: string;
    itemId: string;
    quantity: number;
  }
  const price = (lines: Line[], codes: string[]) => {
    const valid = codes.filter((code) => code in options.codes).slice(0, 1);
    const percent = valid.length ? options.codes[valid[0]!]! : 0;
    const priced = lines.map((line) => {
      const base = itemsById.get(line.itemId)!.price * line.quantity;
      const discount = Math.floor((base * percent) / 100);
      const tax = Math.round(((base - discount) * options.taxBasisPoints) / 10_000);
      return { line, base, discount, tax };
    });
    const sum = (pick: (entry: (typeof priced)[number]) => number) => priced.reduce((acc, e) => acc + pick(e), 0);
    return {
      priced,
      applied: valid,
      base: sum((e) => e.base),
      discount: sum((e) => e.discount),
      tax: sum((e) => e.tax),
    };
  };

  // ---------- UCP ----------
  const ucpCapabilities = () => {
    const ucp = options.ucp!;
    const entry = (name: string, extra: Json = {}) => ({
      version: ucp.version,
      spec: `https://ucp.dev/${ucp.version}/specification/${name}`,
      schema: `https://ucp.dev/${ucp.version}/schemas/shopping/${name}.json`,
      ...extra,
    });
    return {
      'dev.ucp.shopping.checkout': [entry('checkout')],
      ...(ucp.discount
        ? { 'dev.ucp.shopping.discount': [entry('discount', { extends: 'dev.ucp.shopping.checkout' })] }
        : {}),
      ...(ucp.fulfillment
        ? { 'dev.ucp.shopping.fulfillment': [entry('fulfillment', { extends: 'dev.ucp.shopping.checkout' })] }
        : {}),
      ...(ucp.catalog ? { 'dev.ucp.shopping.catalog.search': [entry('catalog_search')] } : {}),
    };
  };
  const ucpProfile = () => {
    const ucp = options.ucp!;
    const service = (transport: string, path: string, schema: string) => ({
      version: ucp.version,
      spec: `https://ucp.dev/${ucp.version}/specification/overview`,
      transport,
      endpoint: `${PUBLIC_ORIGIN}${path}`,
      schema: `https://ucp.dev/${ucp.version}/services/shopping/${schema}`,
    });
    return {
      ucp: {
        version: ucp.version,
        ...(ucp.olderVersions?.length
          ? {
              supported_versions: Object.fromEntries(
                ucp.olderVersions.map((version) => [version, `${PUBLIC_ORIGIN}/profiles/ucp-${version}.json`]),
              ),
            }
          : {}),
        services: {
          'dev.ucp.shopping': [
            ...(ucpRest !== null ? [service('rest', ucpRest, 'rest.openapi.json')] : []),
            ...(ucpMcp !== null ? [service('mcp', ucpMcp, 'mcp.openrpc.json')] : []),
          ],
        },
        capabilities: ucpCapabilities(),
        payment_handlers: {},
      },
    };
  };

  interface UcpCheckout {
    id: string;
    status: string;
    lines: Line[];
    codes: string[];
    /** The shipping destination (a postal address with its id) and the option chosen for it. */
    shipping?: { destination: Json; option: string };
  }
  /** UCP shipping options for a destination, in minor units. */
  const UCP_OPTIONS: Record<string, { title: string; amount: number }> = {
    standard: { title: 'Standard (3-5 days)', amount: 450 },
    express: { title: 'Express (next day)', amount: 1_250 },
  };
  const METHOD_ID = 'method_shipping';
  const GROUP_ID = 'group_1';
  /**
   * A UCP request's shipping choice (fulfillment.methods[0]): undefined when it names none, else the destination and
   * option or the problem with them as a recoverable error message at the field's path.
   */
  function ucpShipping(
    body: Json,
    previous: UcpCheckout['shipping'],
  ): { shipping?: UcpCheckout['shipping']; problem?: Json } | undefined {
    const method = body?.fulfillment?.methods?.[0];
    if (!method || typeof method !== 'object') return undefined;
    const at = '$.fulfillment.methods[0]';
    const problem = (path: string, code: string, content: string) => ({
      problem: { type: 'error', code, severity: 'recoverable', content, path },
    });
    if (method.type !== undefined && method.type !== 'shipping')
      return problem(`${at}.type`, 'invalid', 'This shop only ships.');
    const destinations: Json[] = Array.isArray(method.destinations) ? method.destinations : [];
    const index =
      typeof method.selected_destination_id === 'string'
        ? destinations.findIndex((entry) => entry?.id === method.selected_destination_id)
        : 0;
    const destination = destinations[index] ?? (destinations.length ? undefined : previous?.destination);
    if (!destination) return problem(`${at}.selected_destination_id`, 'invalid', 'No such destination.');
    const where = `${at}.destinations[${Math.max(index, 0)}]`;
    if (typeof destination.address_country !== 'string' || !SHIPS_TO.has(destination.address_country.toUpperCase()))
      return problem(`${where}.address_country`, 'invalid_address', 'This shop does not ship to that country.');
    if (typeof destination.street_address !== 'string' || !destination.street_address.trim())
      return problem(`${where}.street_address`, 'invalid_address', 'A street address is required.');
    const option = method.groups?.[0]?.selected_option_id ?? previous?.option ?? 'standard';
    if (!(option in UCP_OPTIONS))
      return problem(`${at}.groups[0].selected_option_id`, 'invalid', 'No such fulfillment option.');
    return { shipping: { destination: { id: destination.id ?? 'dest_1', ...destination }, option } };
  }
  const checkouts = new Map<string, UcpCheckout>();
  const ucpKeys = new Map<string, { fingerprint: string; status: number; body: Json }>();

  const ucpError = (code: string, content: string, path?: string) => ({
    ucp: { version: options.ucp!.version, status: 'error' },
    messages: [{ type: 'error', code, content, severity: 'unrecoverable', ...(path ? { path } : {}) }],
  });

  /** Negotiation: the platform profile named by the agent, fetched, its version and capabilities intersected. */
  async function negotiate(profileUrl: string | undefined): Promise<Set<string>> {
    if (!profileUrl || !URL.canParse(profileUrl))
      throw new HttpError(400, { code: 'invalid_profile_url', content: 'UCP-Agent must name profile="<url>".' });
    let profile: Json;
    try {
      const answer = await fetch(profileUrl, { signal: AbortSignal.timeout(30_000) });
      if (!answer.ok) throw new Error(`${answer.status}`);
      profile = await answer.json();
    } catch {
      throw new HttpError(424, { code: 'profile_unreachable', content: `Cannot fetch ${profileUrl}.` });
    }
    if (profile?.ucp?.version !== options.ucp!.version)
      throw new HttpError(422, { code: 'version_unsupported', content: `Only ${options.ucp!.version} is spoken.` });
    const theirs = new Set(Object.keys(profile.ucp.capabilities ?? {}));
    return new Set(Object.keys(ucpCapabilities()).filter((name) => theirs.has(name)));
  }

  const ucpBody = (checkout: UcpCheckout, negotiated: Set<string>) => {
    // Codes are honoured only when the platform negotiated the discount capability.
    const withDiscount = negotiated.has('dev.ucp.shopping.discount') || defects.has('ucp-discount-not-negotiated');
    const { priced, applied, base, discount, tax } = price(checkout.lines, withDiscount ? checkout.codes : []);
    const withFulfillment = negotiated.has('dev.ucp.shopping.fulfillment');
    const shipping = withFulfillment && checkout.shipping ? UCP_OPTIONS[checkout.shipping.option]!.amount : 0;
    const total =
      base - discount + shipping + tax + (defects.has('ucp-total-off-by-one') && !checkout.shipping ? 1 : 0);
    const messages: Json[] = [];
    checkout.codes.forEach((code, index) => {
      if (!applied.includes(code))
        messages.push({
          type: 'warning',
          code: 'discount_code_invalid',
          path: `$.discounts.codes[${index}]`,
          content: `${code} is not a code of this shop.`,
        });
    });
    return {
      ucp: {
        version: options.ucp!.version,
        status: 'success',
        capabilities: Object.fromEntries([...negotiated].map((name) => [name, [{ version: options.ucp!.version }]])),
        payment_handlers: {},
      },
      id: checkout.id,
      status: checkout.status,
      currency: options.currency,
      line_items: priced.map(({ line, base: lineBase, discount: lineDiscount, tax: lineTax }) => ({
        id: line.id,
        item: { id: line.itemId, title: itemsById.get(line.itemId)!.title, price: itemsById.get(line.itemId)!.price },
        quantity: line.quantity,
        totals: [
          { type: 'subtotal', amount: lineBase },
          ...(lineDiscount ? [{ type: 'items_discount', amount: -lineDiscount }] : []),
          { type: 'tax', amount: lineTax },
          { type: 'total', amount: lineBase - lineDiscount + lineTax },
        ],
      })),
      totals: [
        { type: 'subtotal', amount: base },
        ...(discount ? [{ type: 'items_discount', amount: -discount }] : []),
        ...(withFulfillment && checkout.shipping ? [{ type: 'fulfillment', amount: shipping }] : []),
        { type: 'tax', amount: tax },
        { type: 'total', amount: total },
      ],
      ...(withFulfillment
        ? {
            fulfillment: {
              methods: [
                {
                  id: METHOD_ID,
                  type: 'shipping',
                  line_item_ids: checkout.lines.map((line) => line.id),
                  ...(checkout.shipping
                    ? {
                        destinations: [checkout.shipping.destination],
                        selected_destination_id: checkout.shipping.destination.id,
                        groups: [
                          {
                            id: GROUP_ID,
                            line_item_ids: checkout.lines.map((line) => line.id),
                            options: Object.entries(UCP_OPTIONS).map(([id, { title, amount }]) => ({
                              id,
                              title,
                              totals: [{ type: 'total', amount }],
                            })),
                            selected_option_id: checkout.shipping.option,
                          },
                        ],
                      }
                    : {}),
                },
              ],
            },
          }
        : {}),
      ...(withDiscount && checkout.codes.length
        ? {
            discounts: {
              codes: checkout.codes,
              applied: applied.map((code) => ({
                code,
                title: `${options.codes[code]}% off`,
                amount: discount,
                method: 'across',
                allocations: priced.map((entry, index) => ({ path: `$.line_items[${index}]`, amount: entry.discount })),
              })),
            },
          }
        : {}),
      messages: withDiscount ? messages : [],
      links: [{ type: 'terms_of_service', url: `${PUBLIC_ORIGIN}/terms` }],
      continue_url: `${PUBLIC_ORIGIN}/checkout/${checkout.id}`,
    };
  };

  /** Lines of a UCP request: 400 for a malformed one, undefined (a business error) for an unknown item. */
  function ucpLines(body: Json, previous: Line[] = []): Line[] | { unknown: number } {
    if (!Array.isArray(body?.line_items) || !body.line_items.length)
      throw new HttpError(400, { code: 'invalid_request', content: 'line_items is required.' });
    const lines: Line[] = [];
    for (const [index, entry] of (body.line_items as Json[]).entries()) {
      if (typeof entry?.item?.id !== 'string' || !Number.isInteger(entry.quantity) || entry.quantity < 1)
        throw new HttpError(400, { code: 'invalid_request', content: `line_items[${index}] is malformed.` });
      if (!itemsById.has(entry.item.id)) return { unknown: index };
      const kept = typeof entry.id === 'string' ? previous.find((line) => line.id === entry.id) : undefined;
      lines.push({ id: kept?.id ?? nextId('li'), itemId: entry.item.id, quantity: entry.quantity });
    }
    return lines;
  }
  const codesOf = (body: Json): string[] =>
    Array.isArray(body?.discounts?.codes) ? body.discounts.codes.filter((c: unknown) => typeof c === 'string') : [];

  /** One UCP operation, the same for REST and MCP: answers [status, body]. */
  async function ucpOperation(
    operation: 'create' | 'get' | 'update' | 'complete' | 'cancel',
    profileUrl: string | undefined,
    idempotencyKey: string | undefined,
    id: string | undefined,
    body: Json,
  ): Promise<[number, Json]> {
    const negotiated = await negotiate(profileUrl);
    if (!negotiated.has('dev.ucp.shopping.checkout'))
      return [200, ucpError('capabilities_incompatible', 'The platform does not declare dev.ucp.shopping.checkout.')];
    if (operation !== 'get' && idempotencyKey === undefined && !defects.has('ucp-idempotency-key-optional'))
      throw new HttpError(400, { code: 'idempotency_key_required', content: 'Idempotency-Key is required.' });
    const keyed = idempotencyKey ? `${operation}:${id ?? ''}:${idempotencyKey}` : undefined;
    const print = fingerprint(body ?? null);
    const stored = keyed ? ucpKeys.get(keyed) : undefined;
    if (stored) {
      if (stored.fingerprint !== print && !defects.has('ucp-idempotency-no-conflict'))
        throw new HttpError(409, { code: 'idempotency_conflict', content: 'This key was used with another body.' });
      return [stored.status, stored.body];
    }
    const answer = ((): [number, Json] => {
      if (operation === 'create') {
        const lines = ucpLines(body);
        if (!Array.isArray(lines)) {
          if (defects.has('ucp-unknown-item-404'))
            throw new HttpError(404, { code: 'not_found', content: 'No such item.' });
          return [
            200,
            ucpError('not_found', 'This shop sells no such item.', `$.line_items[${lines.unknown}].item.id`),
          ];
        }
        const checkout: UcpCheckout = {
          id: nextId('chk'),
          status: 'incomplete',
          lines,
          codes: codesOf(body),
        };
        const shipping = negotiated.has('dev.ucp.shopping.fulfillment') ? ucpShipping(body, undefined) : undefined;
        if (shipping?.shipping) checkout.shipping = shipping.shipping;
        checkouts.set(checkout.id, checkout);
        const created = ucpBody(checkout, negotiated);
        if (shipping?.problem) created.messages.push(shipping.problem);
        return [201, created];
      }
      const checkout = id ? checkouts.get(id) : undefined;
      if (!checkout) return [200, ucpError('not_found', 'No such checkout.', '$.id')];
      if (operation === 'get') return [200, ucpBody(checkout, negotiated)];
      if (checkout.status === 'canceled')
        throw new HttpError(409, { code: 'checkout_not_modifiable', content: 'The checkout is canceled.' });
      if (operation === 'update') {
        const lines = ucpLines(body, checkout.lines);
        if (!Array.isArray(lines))
          return [
            200,
            {
              ...ucpBody(checkout, negotiated),
              messages: [
                {
                  type: 'error',
                  code: 'not_found',
                  severity: 'recoverable',
                  content: 'No such item.',
                  path: `$.line_items[${lines.unknown}].item.id`,
                },
              ],
            },
          ];
        const shipping = negotiated.has('dev.ucp.shopping.fulfillment')
          ? ucpShipping(body, checkout.shipping)
          : undefined;
        if (shipping?.problem) return [200, { ...ucpBody(checkout, negotiated), messages: [shipping.problem] }];
        checkout.lines = lines;
        checkout.codes = codesOf(body);
        if (shipping?.shipping) checkout.shipping = shipping.shipping;
        return [200, ucpBody(checkout, negotiated)];
      }
      if (operation === 'complete') {
        const answerBody = ucpBody(checkout, negotiated);
        answerBody.messages.push({
          type: 'error',
          code: 'payment_required',
          severity: 'requires_buyer_input',
          content: 'Pay at continue_url.',
        } as Json);
        return [200, answerBody];
      }
      checkout.status = 'canceled';
      return [200, ucpBody(checkout, negotiated)];
    })();
    if (keyed && answer[0] < 300) ucpKeys.set(keyed, { fingerprint: print, status: answer[0], body: answer[1] });
    return answer;
  }

  const profileFromHeader = (header: string | undefined) => /profile="([^"]+)"/.exec(header ?? '')?.[1];

  async function ucpRestRoute(request: IncomingMessage, path: string, body: Json): Promise<[number, Json]> {
    const method = request.method ?? 'GET';
    const key = request.headers['idempotency-key'] as string | undefined;
    const profile = profileFromHeader(request.headers['ucp-agent'] as string | undefined);
    if (path === '/catalog/search' && method === 'POST' && options.ucp!.catalog)
      return [
        200,
        {
          ucp: { version: options.ucp!.version },
          products: options.items.map((item) => ({
            id: `prod_${item.id}`,
            title: item.title,
            description: { plain: item.title },
            price_range: {
              min: { amount: item.price, currency: options.currency },
              max: { amount: item.price, currency: options.currency },
            },
            variants: [
              {
                id: item.id,
                title: item.title,
                description: { plain: item.title },
                price: { amount: item.price, currency: options.currency },
              },
            ],
          })),
        },
      ];
    if (path === '/checkout-sessions' && method === 'POST')
      return ucpOperation('create', profile, key, undefined, body);
    const match = /^\/checkout-sessions\/([^/]+)(?:\/(complete|cancel))?$/.exec(path);
    if (match) {
      const id = decodeURIComponent(match[1]!);
      if (match[2] && method === 'POST') return ucpOperation(match[2] as 'complete' | 'cancel', profile, key, id, body);
      if (!match[2] && method === 'GET') return ucpOperation('get', profile, key, id, undefined);
      if (!match[2] && method === 'PUT') return ucpOperation('update', profile, key, id, body);
    }
    throw new HttpError(404, { code: 'not_found', content: 'No such route.' });
  }

  const TOOLS: Record<string, string> = {
    create_checkout: 'create',
    get_checkout: 'get',
    update_checkout: 'update',
    complete_checkout: 'complete',
    cancel_checkout: 'cancel',
  };

  async function mcpRoute(message: Json): Promise<Json> {
    const reply = (result: Json) => ({ jsonrpc: '2.0', id: message.id, result });
    const fail = (code: number, text: string, data?: Json) => ({
      jsonrpc: '2.0',
      id: message.id ?? null,
      error: { code, message: text, ...(data ? { data } : {}) },
    });
    if (message?.method === 'initialize')
      return reply({
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'foreign-merchant', version: '0.1.0' },
      });
    if (message?.method === 'tools/list')
      return reply({
        tools: [...Object.keys(TOOLS), ...(options.ucp!.catalog ? ['search_catalog'] : [])].map((name) => ({
          name,
          inputSchema: { type: 'object' },
        })),
      });
    if (message?.method !== 'tools/call') return fail(-32601, 'Method not found');
    const { name, arguments: args } = message.params ?? {};
    const operation = TOOLS[name];
    if (!operation) return fail(-32602, `Unknown tool ${name}`);
    try {
      const [, body] = await ucpOperation(
        operation as 'create',
        args?.meta?.['ucp-agent']?.profile,
        args?.meta?.['idempotency-key'],
        args?.id,
        args?.checkout,
      );
      return reply({ content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body });
    } catch (error) {
      if (error instanceof HttpError)
        return fail(error.status === 409 ? -32000 : -32602, error.body.content, error.body);
      throw error;
    }
  }

  // ---------- ACP ----------
  interface AcpSession {
    id: string;
    status: string;
    lines: Line[];
    codes: string[];
    /** fulfillment_details as sent, when its address is one this shop ships to. */
    details?: Json;
    option?: string;
  }
  // Shipping: two options to the countries this shop ships to; any other country is not ready for payment.
  const SHIPPING: Record<string, { title: string; amount: number }> = {
    ground: { title: 'Ground', amount: 500 },
    air: { title: 'Air', amount: 1500 },
  };
  /** The problem of a request's fulfillment_details, as a MessageError; undefined when its address ships. */
  const addressProblem = (details: Json): Json | undefined =>
    details?.address && !SHIPS_TO.has(String(details.address.country).toUpperCase())
      ? {
          type: 'error',
          code: 'invalid',
          param: '$.fulfillment_details.address.country',
          content_type: 'plain',
          content: 'This shop does not ship there.',
        }
      : undefined;
  const sessions = new Map<string, AcpSession>();
  const acpKeys = new Map<string, { fingerprint: string; status: number; body: Json }>();
  const tokens = new Set<string>(options.acp?.bearerToken ? [options.acp.bearerToken] : []);
  const acpError = (status: number, code: string, message: string, extra: Json = {}) =>
    new HttpError(status, { type: 'invalid_request', code, message, ...extra });

  const acpBody = (session: AcpSession, messages: Json[] = []) => {
    const { priced, applied, base, discount, tax } = price(session.lines, session.codes);
    const shipping = session.details?.address ? SHIPPING[session.option ?? 'ground']!.amount : undefined;
    const totals = (b: number, d: number, t: number, f?: number) => [
      { type: 'items_base_amount', display_text: 'Items', amount: b },
      { type: 'items_discount', display_text: 'Discount', amount: d },
      { type: 'subtotal', display_text: 'Subtotal', amount: b - d },
      ...(f === undefined ? [] : [{ type: 'fulfillment', display_text: 'Shipping', amount: f }]),
      { type: 'tax', display_text: 'Tax', amount: t },
      { type: 'total', display_text: 'Total', amount: b - d + (f ?? 0) + t },
    ];
    const lineIds = session.lines.map((line) => line.id);
    const rejected = session.codes
      .filter((code) => !applied.includes(code))
      .map((code) => ({ code, reason: 'discount_code_invalid', message: `${code} is not a code of this shop.` }));
    return {
      id: session.id,
      status: session.status,
      currency: options.currency.toLowerCase(),
      line_items: priced.map((entry) => ({
        id: entry.line.id,
        item: { id: entry.line.itemId },
        quantity: entry.line.quantity,
        name: itemsById.get(entry.line.itemId)!.title,
        unit_amount: itemsById.get(entry.line.itemId)!.price,
        totals: totals(entry.base, entry.discount, entry.tax),
      })),
      totals: totals(base, discount, tax, shipping),
      ...(session.details ? { fulfillment_details: session.details } : {}),
      fulfillment_options: session.details?.address
        ? Object.entries(SHIPPING).map(([id, { title, amount }]) => ({
            type: 'shipping',
            id,
            title,
            totals: [{ type: 'fulfillment', display_text: 'Shipping', amount }],
          }))
        : [],
      ...(session.details?.address
        ? {
            selected_fulfillment_options: [
              { type: 'shipping', option_id: session.option ?? 'ground', item_ids: lineIds },
            ],
          }
        : {}),
      messages,
      links: [{ type: 'terms_of_use', url: `${PUBLIC_ORIGIN}/terms` }],
      capabilities: options.acp!.discount ? { extensions: [{ name: 'discount' }] } : {},
      ...(options.acp!.discount && session.codes.length
        ? {
            discounts: {
              codes: session.codes,
              applied: applied.map((code) => ({
                id: `disc_${code}`,
                code,
                coupon: { id: code, name: `${options.codes[code]}% off`, percent_off: options.codes[code] },
                amount: discount,
              })),
              ...(defects.has('acp-invalid-code-not-rejected') ? {} : { rejected }),
            },
          }
        : {}),
    };
  };

  function acpLines(body: Json, previous: Line[] = []): Line[] | { unknown: number } {
    if (!Array.isArray(body?.line_items) || !body.line_items.length)
      throw acpError(400, 'missing_field', '$.line_items is required.', { param: '$.line_items' });
    const lines: Line[] = [];
    for (const [index, entry] of (body.line_items as Json[]).entries()) {
      if (typeof entry?.id !== 'string' || !Number.isInteger(entry.quantity) || entry.quantity < 1)
        throw acpError(400, 'invalid_field', `$.line_items[${index}] is malformed.`, {
          param: `$.line_items[${index}]`,
        });
      if (!itemsById.has(entry.id)) return { unknown: index };
      const kept = previous.find((line) => line.itemId === entry.id);
      lines.push({ id: kept?.id ?? nextId('li'), itemId: entry.id, quantity: entry.quantity });
    }
    return lines;
  }

  async function acpRoute(
    request: IncomingMessage,
    path: string,
    body: Json,
  ): Promise<[number, Json, Record<string, string>]> {
    const acp = options.acp!;
    const method = request.method ?? 'GET';
    const auth = /^Bearer (.+)$/.exec((request.headers.authorization as string | undefined) ?? '')?.[1];
    if (!auth || !tokens.has(auth))
      throw new HttpError(
        401,
        { type: 'invalid_request', code: 'unauthorized', message: 'A bearer token is required.' },
        {
          'WWW-Authenticate': 'Bearer realm="acp"',
        },
      );
    if (request.headers['api-version'] !== acp.version)
      throw acpError(400, 'unsupported_api_version', `API-Version ${acp.version} is the one spoken.`, {
        supported_versions: [acp.version],
      });
    const key = request.headers['idempotency-key'] as string | undefined;
    if (method === 'POST' && !key) throw acpError(400, 'idempotency_key_required', 'Idempotency-Key is required.');
    const keyed = key ? `${path}:${key}` : undefined;
    const print = fingerprint(body ?? null);
    const stored = keyed ? acpKeys.get(keyed) : undefined;
    if (stored) {
      if (stored.fingerprint !== print)
        throw acpError(422, 'idempotency_conflict', 'This key was used with another body.');
      return [
        stored.status,
        stored.body,
        defects.has('acp-no-replayed-header') ? {} : { 'Idempotent-Replayed': 'true' },
      ];
    }
    const answer = ((): [number, Json] => {
      if (path === '/checkout_sessions' && method === 'POST') {
        if (typeof body?.currency !== 'string')
          throw acpError(400, 'missing_field', '$.currency is required.', { param: '$.currency' });
        const lines = acpLines(body);
        if (!Array.isArray(lines))
          throw acpError(400, 'item_not_found', 'No such item.', { param: `$.line_items[${lines.unknown}].id` });
        const session: AcpSession = { id: nextId('cs'), status: 'not_ready_for_payment', lines, codes: codesOf(body) };
        sessions.set(session.id, session);
        const problem = addressProblem(body.fulfillment_details);
        if (!problem && body.fulfillment_details) session.details = body.fulfillment_details;
        return [201, acpBody(session, problem ? [problem] : [])];
      }
      const match = /^\/checkout_sessions\/([^/]+)(?:\/(complete|cancel))?$/.exec(path);
      const session = match ? sessions.get(decodeURIComponent(match[1]!)) : undefined;
      if (!match) throw acpError(404, 'not_found', 'No such route.');
      if (!session) throw acpError(404, 'session_not_found', 'No such checkout session.');
      if (!match[2] && method === 'GET') return [200, acpBody(session)];
      if (match[2] === 'cancel' && method === 'POST') {
        if (session.status === 'canceled' && !defects.has('acp-cancel-twice-200'))
          throw acpError(405, 'session_already_canceled', 'The session is already canceled.');
        session.status = 'canceled';
        return [200, acpBody(session)];
      }
      if (session.status === 'canceled') throw acpError(405, 'session_canceled', 'The session is canceled.');
      if (match[2] === 'complete' && method === 'POST') {
        if (!body?.payment_data)
          throw acpError(400, 'missing_field', '$.payment_data is required.', { param: '$.payment_data' });
        throw acpError(422, 'payment_declined', 'This shop takes no delegated payment.');
      }
      if (!match[2] && method === 'POST') {
        // An update without line_items keeps the session's.
        const lines = body?.line_items === undefined ? session.lines : acpLines(body, session.lines);
        if (!Array.isArray(lines))
          return [
            200,
            acpBody(session, [
              {
                type: 'error',
                code: 'not_found',
                param: `$.line_items[${lines.unknown}].id`,
                content_type: 'plain',
                content: 'No such item.',
              },
            ]),
          ];
        const problem = addressProblem(body.fulfillment_details);
        if (problem) return [200, acpBody(session, [problem])];
        const selected = body.selected_fulfillment_options?.[0]?.option_id;
        if (selected !== undefined && !(selected in SHIPPING))
          return [
            200,
            acpBody(session, [
              {
                type: 'error',
                code: 'invalid',
                param: '$.selected_fulfillment_options[0]',
                content_type: 'plain',
                content: 'No such option.',
              },
            ]),
          ];
        session.lines = lines;
        if (body.discounts) session.codes = codesOf(body);
        if (body.fulfillment_details) session.details = body.fulfillment_details;
        if (selected !== undefined) session.option = selected;
        return [200, acpBody(session)];
      }
      throw acpError(404, 'not_found', 'No such route.');
    })();
    if (keyed && answer[0] < 300) acpKeys.set(keyed, { fingerprint: print, status: answer[0], body: answer[1] });
    return [...answer, {}];
  }

  function acpDiscovery() {
    const acp = options.acp!;
    return {
      protocol: { name: 'acp', version: acp.version, supported_versions: [acp.version] },
      api_base_url: `${PUBLIC_ORIGIN}${acp.path}`,
      transports: ['rest'],
      capabilities: {
        services: ['checkout'],
        ...(acp.discount ? { extensions: [{ name: 'discount' }] } : {}),
        supported_currencies: [options.currency.toLowerCase()],
      },
    };
  }

  // ---------- HTTP ----------
  const send = (response: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}) => {
    if (body === undefined) {
      response.writeHead(status, headers).end();
      return;
    }
    response.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers });
    response.end(JSON.stringify(body));
  };

  const server: Server = createServer((request, response) => {
    void (async () => {
      const path = (request.url ?? '/').split('?')[0]!;
      requests.push(`${request.method} ${path}`);
      const text = await readBody(request);
      let body: Json;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        if (!request.headers['content-type']?.includes('x-www-form-urlencoded'))
          return send(response, 400, { code: 'invalid_request', content: 'The body is not JSON.' });
      }
      try {
        if (path === '/.well-known/ucp' && options.ucp) return send(response, 200, ucpProfile());
        if (path === '/.well-known/acp.json' && options.acp) return send(response, 200, acpDiscovery());
        if (options.acp?.client && path === options.acp.client.tokenPath && request.method === 'POST') {
          const form = new URLSearchParams(text);
          if (
            form.get('client_id') !== options.acp.client.id ||
            form.get('client_secret') !== options.acp.client.secret
          )
            return send(response, 401, { error: 'invalid_client' });
          const token = randomUUID();
          tokens.add(token);
          return send(response, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
        }
        if (ucpMcp !== null && path === ucpMcp && request.method === 'POST') {
          if (body?.id === undefined) return send(response, 202, undefined);
          const message = await mcpRoute(body);
          if (!options.ucp!.mcpEventStream) return send(response, 200, message);
          response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
          return response.end(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
        }
        if (ucpRest !== null && path.startsWith(`${ucpRest}/`)) {
          const [status, answer] = await ucpRestRoute(request, path.slice(ucpRest.length), body);
          return send(response, status, answer);
        }
        if (options.acp && path.startsWith(`${options.acp.path}/`)) {
          const [status, answer, headers] = await acpRoute(request, path.slice(options.acp.path.length), body);
          return send(response, status, answer, headers);
        }
        return send(response, 404, { code: 'not_found', content: `No route ${path}.` });
      } catch (error) {
        if (error instanceof HttpError) return send(response, error.status, error.body, error.headers);
        return send(response, 500, { code: 'internal', content: String(error) });
      }
    })();
  });
  // Longer than any pause between a runner's requests on a loaded machine.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A tea shop speaking UCP (REST + MCP over event streams, catalog search, discounts) and ACP with an OAuth client, in euros. */
export const TEA_SHOP: MerchantOptions = {
  items: [
    { id: 'tea-sencha-100g', title: 'Sencha, 100 g', price: 850 },
    { id: 'pot-cast-iron', title: 'Cast-iron teapot', price: 4_200 },
  ],
  currency: 'EUR',
  codes: { SPRING15: 15 },
  taxBasisPoints: 700,
  ucp: {
    version: '2026-04-08',
    olderVersions: ['2026-01-11'],
    restPath: '/api/ucp/v1',
    mcpPath: '/api/ucp/mcp',
    catalog: true,
    discount: true,
    fulfillment: true,
    mcpEventStream: true,
  },
  acp: {
    version: '2026-04-17',
    path: '/commerce/acp',
    client: { id: 'runner', secret: 'tea-secret', tokenPath: '/auth/token' },
    discount: true,
  },
};

/** A bicycle shop speaking UCP over REST only and ACP with a static token, in pounds; its defects are chosen per test. */
export const BIKE_SHOP: MerchantOptions = {
  items: [
    { id: 'SKU-CHAIN-11', title: '11-speed chain', price: 2_499 },
    { id: 'SKU-TUBE-700', title: '700c inner tube', price: 599 },
  ],
  currency: 'GBP',
  codes: { RIDE10: 10 },
  taxBasisPoints: 2_000,
  ucp: { version: '2026-04-08', restPath: '/shop/ucp', discount: true, fulfillment: true },
  acp: { version: '2026-04-17', path: '/v2/acp', bearerToken: 'bike-token', discount: true },
};
