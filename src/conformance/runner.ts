// The conformance runner: points at any UCP or ACP merchant, discovers what it advertises (/.well-known/ucp,
// /.well-known/acp.json), states the versions found and the one it tests, and runs every check of every advertised
// capability on every advertised transport, validating each body against that version's schemas in protocols/. The
// checks live in checks/, one file per protocol and capability; this store's exact figures (checks/store-*.ts) run
// only with `storeSpecific`. It imports nothing of the store it may be pointed at (a lint rule keeps it so).
import { HttpClient, parseJson, REQUEST_TIMEOUT_MS, UnreachableError, type Json } from './client.js';
import { acpCheckoutChecks } from './checks/acp-checkout.js';
import { acpFulfillmentChecks } from './checks/acp-fulfillment.js';
import type { AcpContext } from './checks/acp-context.js';
import { acpDiscountChecks } from './checks/acp-discount.js';
import { acpCartChecks } from './checks/acp-cart.js';
import { acpFeedChecks, type AcpFeedContext } from './checks/acp-feed.js';
import { acpMcpChecks, type AcpMcpContext } from './checks/acp-mcp.js';
import { CheckFailure, CheckSkipped, type Check } from './checks/check.js';
import {
  discoverAcp,
  discoverUcp,
  discoveryChecks,
  type AcpDiscovery,
  type DiscoveryContext,
  type UcpDiscovery,
} from './checks/discovery.js';
import { storeAcpChecks } from './checks/store-acp.js';
import { openStoreSession } from './checks/store-session.js';
import { storeUcpChecks } from './checks/store-ucp.js';
import { CART, ucpCartChecks } from './checks/ucp-cart.js';
import {
  ORDER,
  ucpOrderChecks,
  ucpOrderEventChecks,
  ucpOrderMcpChecks,
  type OrderContext,
  type OrderEventsContext,
} from './checks/ucp-order.js';
import { receiveOrderEvents, type EventReceiver } from './order-events.js';
import {
  CATALOG_LOOKUP,
  CATALOG_SEARCH,
  itemsFromSearch,
  searchCatalog,
  ucpCatalogChecks,
  ucpCatalogLookupChecks,
} from './checks/ucp-catalog.js';
import { ucpCheckoutChecks, ucpRestChecks } from './checks/ucp-checkout.js';
import type { UcpContext, UcpProfiles } from './checks/ucp-context.js';
import { ucpDiscountChecks } from './checks/ucp-discount.js';
import { ucpFulfillmentChecks } from './checks/ucp-fulfillment.js';
import { ucpMcpChecks, type UcpMcpContext } from './checks/ucp-mcp.js';
import { ucpNegotiationChecks } from './checks/ucp-negotiation.js';
import { mcpSession, mcpTransport, restTransport, type UcpTransportSetup } from './checks/ucp-transport.js';
import type { Fixture, FixtureItem } from './fixture.js';
import { capabilityEntry, platformProfile, serveProfiles, type ProfileServer } from './profile.js';
import { planLine, resultLine, summaryLine, type CheckResult, type Report } from './report.js';
import { schemaSets, type SchemaSets } from './schemas.js';

export interface RunnerOptions {
  /** The merchant's origin, e.g. https://shop.example. */
  baseUrl: string;
  fixture?: Fixture;
  /** Test one protocol only. */
  protocol?: 'ucp' | 'acp';
  /** The merchant proceeds without a usable platform profile: the checks of refused profiles are skipped. */
  lenient?: boolean;
  /** A platform profile URL the merchant can fetch (else the runner serves its own on 127.0.0.1). */
  profileUrl?: string;
  /** Also run this store's exact figures (checks/store-*.ts): for this project's own tests. */
  storeSpecific?: boolean;
  timeoutMs?: number;
  /**
   * Receive UCP order events: the runner's profile declares dev.ucp.shopping.order with a config.webhook_url it
   * serves, and the runner waits up to this many seconds for the events of an order made under that profile.
   */
  orderEventsSeconds?: number;
  log?: (line: string) => void;
}

const CHECKOUT = 'dev.ucp.shopping.checkout';
const DISCOUNT = 'dev.ucp.shopping.discount';
const FULFILLMENT = 'dev.ucp.shopping.fulfillment';

interface Scope {
  protocol: string;
  capability?: string;
  transport?: string;
  /** The tested version, put into the checks' specification references. */
  version?: string;
}

/** Runs checks and records each outcome; whatever a merchant answers fails a check at most, never the run. */
class CheckRunner {
  constructor(
    private readonly report: Report,
    private readonly log: (line: string) => void,
  ) {}

  async run<Context>(checks: Check<Context>[], context: Context, scope: Scope, skipReason?: string): Promise<void> {
    for (const check of checks) {
      const started = Date.now();
      if (skipReason) {
        this.record(check, scope, 'skip', skipReason, started);
        continue;
      }
      try {
        await check.run(context);
        this.record(check, scope, 'pass', undefined, started);
      } catch (error) {
        if (error instanceof CheckSkipped) this.record(check, scope, 'skip', error.message, started);
        else if (error instanceof CheckFailure) this.record(check, scope, 'fail', error.message, started);
        else if (error instanceof UnreachableError)
          this.record(check, scope, 'fail', `expected an answer, got none: ${error.message}`, started);
        else {
          const message = `expected a protocol answer, got one the check could not read: ${String(error)}`;
          this.record(check, scope, 'fail', message, started);
        }
      }
    }
  }

  private record<Context>(
    check: Check<Context>,
    { version, ...where }: Scope,
    outcome: CheckResult['outcome'],
    message: string | undefined,
    started: number,
  ): void {
    const result: CheckResult = {
      id: check.id,
      title: check.title,
      ...where,
      spec: check.spec.replaceAll('{version}', version ?? 'latest'),
      outcome,
      ...(message !== undefined ? { message } : {}),
      durationMs: Date.now() - started,
    };
    this.report.checks.push(result);
    this.log(resultLine(result));
  }
}

interface Run {
  client: HttpClient;
  runner: CheckRunner;
  report: Report;
  options: RunnerOptions;
  fixture: Fixture;
  base: string;
  log: (line: string) => void;
  /** The compiled schemas of this run: each version compiled once, dropped with the run. */
  schemaSet: SchemaSets;
  onSchemaErrors: (count: number) => void;
}

export async function runConformance(options: RunnerOptions): Promise<Report> {
  const log = options.log ?? ((line: string) => console.log(line));
  const base = options.baseUrl.replace(/\/+$/, '');
  const report: Report = {
    target: base,
    startedAt: new Date().toISOString(),
    plans: [],
    notes: [],
    checks: [],
    summary: { total: 0, pass: 0, fail: 0, skip: 0, responses: 0, schemaErrors: 0 },
  };
  const run: Run = {
    client: new HttpClient(options.timeoutMs ?? REQUEST_TIMEOUT_MS),
    runner: new CheckRunner(report, log),
    report,
    options,
    fixture: options.fixture ?? {},
    base,
    log,
    schemaSet: schemaSets(),
    onSchemaErrors: (count) => (report.summary.schemaErrors += count),
  };
  const wants = (protocol: 'ucp' | 'acp') => !options.protocol || options.protocol === protocol;

  log(`storefront-conformance → ${base}`);
  const ucp = wants('ucp') ? await discoverUcp(run.client, base, report.notes) : undefined;
  const acp = wants('acp') ? await discoverAcp(run.client, base, report.notes) : undefined;
  for (const plan of [ucp?.plan, acp?.plan]) if (plan) report.plans.push(plan);
  for (const plan of report.plans) log(planLine(plan));
  const notesShown = report.notes.length;
  for (const note of report.notes) log(`NOTE ${note}`);

  const discovery: DiscoveryContext = {
    ucp: ucp ?? {
      plan: { protocol: 'ucp', advertised: [], known: [] },
      endpoints: { other: [] },
      capabilities: new Map(),
    },
    acp: acp ?? {
      plan: { protocol: 'acp', advertised: [], known: [] },
      transports: [],
      extensions: new Set(),
      services: new Set(),
      currency: 'usd',
    },
    schemaSets: run.schemaSet,
    onSchemaErrors: run.onSchemaErrors,
  };
  if (ucp)
    await run.runner.run(discoveryChecks.slice(0, 1), discovery, { protocol: 'discovery', version: ucp.plan.tested });
  if (acp)
    await run.runner.run(discoveryChecks.slice(1), discovery, { protocol: 'discovery', version: acp.plan.tested });

  const items = ucp ? await runUcp(run, ucp) : undefined;
  if (acp) await runAcp(run, acp, items);
  if (options.storeSpecific) await runStoreFigures(run, wants);

  for (const note of report.notes.slice(notesShown)) log(`NOTE ${note}`);
  const count = (outcome: CheckResult['outcome']) => report.checks.filter((check) => check.outcome === outcome).length;
  report.summary = {
    total: report.checks.length,
    pass: count('pass'),
    fail: count('fail'),
    skip: count('skip'),
    responses: run.client.responses,
    schemaErrors: report.summary.schemaErrors,
  };
  log(summaryLine(report.summary));
  return report;
}

/** Items to buy: the fixture's, else found through the merchant's UCP catalog search; else why there are none. */
interface Items {
  items: FixtureItem[];
  reason?: string;
  fromSearch: boolean;
}

async function findItems(run: Run, ucp: UcpDiscovery, profile: string): Promise<Items> {
  if (run.fixture.items?.length) return { items: run.fixture.items, fromSearch: false };
  if (!ucp.plan.tested || !ucp.capabilities.has(CATALOG_SEARCH) || !ucp.endpoints.rest)
    return {
      items: [],
      reason: 'the fixture has no items and the merchant advertises no UCP catalog search to find some',
      fromSearch: false,
    };
  try {
    const answer = await searchCatalog(run.client, ucp.endpoints.rest, profile);
    const items = itemsFromSearch(run.schemaSet('ucp', ucp.plan.tested), answer);
    if (!items.length)
      return { items, reason: 'the fixture has no items and catalog search found none', fromSearch: true };
    run.log(`NOTE items from catalog search: ${items.map((item) => item.id).join(', ')}`);
    return { items, fromSearch: true };
  } catch (error) {
    return {
      items: [],
      reason: `the fixture has no items and catalog search failed: ${(error as Error).message}`,
      fromSearch: true,
    };
  }
}

/** The platform profiles the negotiation checks send, mirroring the merchant's capabilities at `version`. */
async function serveNegotiationProfiles(
  ucp: UcpDiscovery,
  version: string,
  webhookUrl?: string,
): Promise<{ server: ProfileServer; profiles: UcpProfiles }> {
  const entries = (names: string[]) =>
    Object.fromEntries(
      names.map((name) => {
        const entry: Json = ucp.capabilities.get(name) ?? {};
        const extra =
          typeof entry.extends === 'string' || Array.isArray(entry.extends) ? { extends: entry.extends } : {};
        // The order capability's events go to the runner's receiver, when asked for (--order-events).
        const config = name === ORDER && webhookUrl ? { config: { webhook_url: webhookUrl } } : {};
        return [name, [capabilityEntry(name, version, { ...extra, ...config })]];
      }),
    );
  const all = [...ucp.capabilities.keys()];
  const extendsCheckout = (name: string) => {
    const parent = ucp.capabilities.get(name)?.extends;
    return parent === CHECKOUT || (Array.isArray(parent) && parent.includes(CHECKOUT));
  };
  const withoutCheckout = all.filter((name) => name !== CHECKOUT && !extendsCheckout(name));
  const server = await serveProfiles({
    '/full.json': platformProfile({ version, capabilities: entries(all) }),
    '/no-discount.json': platformProfile({ version, capabilities: entries(all.filter((name) => name !== DISCOUNT)) }),
    '/no-checkout.json': platformProfile({
      version,
      // A platform profile declares at least one capability.
      capabilities: withoutCheckout.length
        ? entries(withoutCheckout)
        : { 'dev.ucp.shopping.order': [capabilityEntry('dev.ucp.shopping.order', version)] },
    }),
    '/unsupported-version.json': platformProfile({ version: '2000-01-01', capabilities: entries(all) }),
  });
  return {
    server,
    profiles: {
      full: `${server.base}/full.json`,
      noDiscount: `${server.base}/no-discount.json`,
      noCheckout: `${server.base}/no-checkout.json`,
      unsupportedVersion: `${server.base}/unsupported-version.json`,
      missing: `${server.base}/missing.json`,
    },
  };
}

/** UCP: catalog search, then per advertised transport the MCP, checkout, negotiation, discount and fulfillment checks. */
async function runUcp(run: Run, ucp: UcpDiscovery): Promise<Items | undefined> {
  const { runner, options } = run;
  const version = ucp.plan.tested;
  if (!version) {
    await runner.run(
      [...ucpCheckoutChecks, ...ucpRestChecks],
      {} as UcpContext,
      { protocol: 'ucp', capability: 'checkout' },
      ucp.plan.reason,
    );
    return undefined;
  }
  const started = Date.now();
  const events =
    options.orderEventsSeconds && !options.profileUrl && ucp.capabilities.has(ORDER)
      ? await receiveOrderEvents()
      : undefined;
  const served = options.profileUrl ? undefined : await serveNegotiationProfiles(ucp, version, events?.url);
  try {
    const profiles: UcpProfiles = served?.profiles ?? { full: options.profileUrl! };
    if (events)
      run.log(
        `NOTE order events: waiting up to ${options.orderEventsSeconds} s for the events of an order made under ${profiles.full} (delivered to ${events.url})`,
      );
    const found = await findItems(run, ucp, profiles.full);
    const capabilities = new Set(ucp.capabilities.keys());
    const schemas = run.schemaSet('ucp', version);
    const contextFor = (checkouts: Json[]): Omit<UcpContext, 'transport'> => ({
      client: run.client,
      schemas,
      version,
      capabilities,
      items: found.items,
      itemsReason: found.reason,
      fixture: run.fixture,
      profiles,
      lenient: options.lenient ?? false,
      checkouts,
    });

    // The catalog and cart checks, over REST (the order's come last, after its events).
    const restContext = { ...contextFor([]), restEndpoint: ucp.endpoints.rest, profile: profiles.full };
    const restScope = (capability: string): Scope => ({ protocol: 'ucp', capability, transport: 'rest', version });
    const byCapability = [
      [CATALOG_SEARCH, ucpCatalogChecks, 'catalog.search'],
      [CATALOG_LOOKUP, ucpCatalogLookupChecks, 'catalog.lookup'],
      [CART, ucpCartChecks, 'cart'],
    ] as const;
    for (const [name, checks, capability] of byCapability)
      if (capabilities.has(name))
        await runner.run(checks, restContext as UcpContext & typeof restContext, restScope(capability));

    const transports = (['rest', 'mcp'] as const).filter((name) => ucp.endpoints[name]);
    if (!transports.length) run.report.notes.push('UCP: no REST or MCP endpoint is advertised at the tested version');
    for (const other of ucp.endpoints.other) run.report.notes.push(`UCP transport ${other}: no checks in this runner`);
    const withoutCheckout = capabilities.has(CHECKOUT)
      ? undefined
      : 'the merchant does not advertise dev.ucp.shopping.checkout';
    const withoutDiscount = capabilities.has(DISCOUNT)
      ? undefined
      : 'the merchant does not advertise dev.ucp.shopping.discount';
    const withoutFulfillment = capabilities.has(FULFILLMENT)
      ? undefined
      : 'the merchant does not advertise dev.ucp.shopping.fulfillment';
    for (const name of transports) {
      const scope = (capability: string): Scope => ({ protocol: 'ucp', capability, transport: name, version });
      const checkouts: Json[] = [];
      const setup: UcpTransportSetup = {
        client: run.client,
        schemas,
        endpoint: ucp.endpoints[name]!,
        profile: profiles.full,
        checkouts,
        onSchemaErrors: run.onSchemaErrors,
      };
      const context: UcpContext = {
        ...contextFor(checkouts),
        transport: name === 'rest' ? restTransport(setup) : mcpTransport(setup),
      };
      if (name === 'mcp') {
        const mcpContext: UcpMcpContext = {
          ...context,
          session: mcpSession(run.client, setup.endpoint),
          rest: ucp.endpoints.rest ? restTransport({ ...setup, endpoint: ucp.endpoints.rest }) : undefined,
        };
        await runner.run(ucpMcpChecks, mcpContext, scope('mcp'));
      }
      // The totals check comes last: it judges every checkout the others received.
      await runner.run(ucpCheckoutChecks.slice(0, -1), context, scope('checkout'), withoutCheckout);
      if (name === 'rest') await runner.run(ucpRestChecks, context, scope('checkout'), withoutCheckout);
      await runner.run(ucpNegotiationChecks, context, scope('negotiation'), withoutCheckout);
      await runner.run(ucpDiscountChecks, context, scope('discount'), withoutCheckout ?? withoutDiscount);
      await runner.run(ucpFulfillmentChecks, context, scope('fulfillment'), withoutCheckout ?? withoutFulfillment);
      await runner.run(ucpCheckoutChecks.slice(-1), context, scope('checkout'), withoutCheckout);
    }

    const checked = new Set([CHECKOUT, DISCOUNT, FULFILLMENT, CATALOG_SEARCH, CATALOG_LOOKUP, CART, ORDER]);
    for (const capability of capabilities) {
      if (checked.has(capability)) continue;
      const check: Check<undefined> = {
        id: `ucp.capability.${capability.replace(/^dev\.ucp\.shopping\./, '')}`,
        title: `${capability} is advertised`,
        spec: `UCP {version}, ${capability}`,
        run: async () => undefined,
      };
      const reason = 'this runner has no checks for this capability yet';
      await runner.run([check], undefined, { protocol: 'ucp', capability, version }, reason);
    }
    if (capabilities.has(ORDER)) {
      await runOrderEvents(run, ucp, version, profiles.full, events, started);
      // The order checks, over REST and MCP: the fixture's order, else the one the events told of (made under the
      // runner's profile, so the runner can read it).
      const told: Json = events?.received
        .map((event) => parseJson(event.raw))
        .find((body) => typeof body?.id === 'string' && body.ucp);
      if (!run.fixture.ucp && told) run.log(`NOTE order: checking ${told.id}, the order the events told of`);
      const order = run.fixture.ucp ?? (told ? { order_id: told.id as string } : undefined);
      const orderContext: OrderContext = {
        ...(restContext as OrderContext),
        fixture: { ...run.fixture, ...(order ? { ucp: order } : {}) },
        mcp: ucp.endpoints.mcp ? mcpSession(run.client, ucp.endpoints.mcp) : undefined,
        schemaSets: run.schemaSet,
      };
      await runner.run(ucpOrderChecks, orderContext, restScope('order'));
      if (ucp.endpoints.mcp)
        await runner.run(ucpOrderMcpChecks, orderContext, {
          protocol: 'ucp',
          capability: 'order',
          transport: 'mcp',
          version,
        });
    }
    return found;
  } finally {
    await served?.server.close();
    await events?.close();
  }
}

/** The order-event checks, once the events have settled (or the wait is over); skipped when not asked for. */
async function runOrderEvents(
  run: Run,
  ucp: UcpDiscovery,
  version: string,
  profile: string,
  events: EventReceiver | undefined,
  started: number,
): Promise<void> {
  const seconds = run.options.orderEventsSeconds ?? 0;
  const reason = !seconds
    ? 'not asked for: --order-events SECONDS has the runner receive the events of an order made under its profile'
    : run.options.profileUrl
      ? 'the runner can declare its webhook_url only in a profile it serves (not with --profile-url)'
      : undefined;
  if (events) await events.settle(started + seconds * 1000);
  const context: OrderEventsContext = {
    schemas: run.schemaSet('ucp', version),
    version,
    url: events?.url ?? '',
    profile,
    waitedSeconds: seconds,
    received: events?.received ?? [],
    businessProfile: ucp.profile,
  };
  await run.runner.run(
    ucpOrderEventChecks,
    context,
    { protocol: 'ucp', capability: 'order', transport: 'webhook', version },
    reason,
  );
}

/** ACP over REST: the checkout checks, and the discount extension's when advertised. */
async function runAcp(run: Run, acp: AcpDiscovery, ucpItems: Items | undefined): Promise<void> {
  const version = acp.plan.tested;
  const notTested = !version
    ? acp.plan.reason
    : !acp.apiBase
      ? 'the discovery document has no api_base_url'
      : undefined;
  const items: Items = run.fixture.items?.length
    ? { items: run.fixture.items, fromSearch: false }
    : (ucpItems ?? { items: [], reason: 'the fixture has no items', fromSearch: false });
  const context: AcpContext = {
    client: run.client,
    // Never used when the version is not tested: every check is skipped then.
    schemas: version ? run.schemaSet('acp', version) : (undefined as never),
    version: version ?? '',
    apiBase: acp.apiBase ?? '',
    extensions: acp.extensions,
    services: acp.services,
    currency: acp.currency,
    items: items.items,
    itemsReason: items.reason,
    fixture: run.fixture,
    sessions: [],
    onSchemaErrors: run.onSchemaErrors,
  };
  if (!notTested) {
    Object.assign(context, await acpCredentials(run.client, run.fixture, run.base, run.report.notes));
    if (items.fromSearch && items.items.length) run.log('NOTE ACP: using the items found through UCP catalog search');
  }
  const scope = (capability: string): Scope => ({ protocol: 'acp', capability, transport: 'rest', version });
  await run.runner.run(acpCheckoutChecks, context, scope('checkout'), notTested);
  await run.runner.run(acpFulfillmentChecks, context, scope('fulfillment'), notTested);
  const withoutDiscount = acp.extensions.has('discount')
    ? undefined
    : 'the merchant does not advertise the discount extension';
  await run.runner.run(acpDiscountChecks, context, scope('discount'), notTested ?? withoutDiscount);
  // Carts, MCP and the feed are optional: checked when the merchant offers them.
  if (acp.services.has('carts')) await run.runner.run(acpCartChecks, context, scope('cart'), notTested);
  if (acp.transports.includes('mcp')) {
    const headers: Record<string, string> = context.token ? { Authorization: `Bearer ${context.token}` } : {};
    const mcp: AcpMcpContext = { ...context, session: mcpSession(run.client, `${context.apiBase}/mcp`, headers) };
    await run.runner.run(acpMcpChecks, mcp, { ...scope('checkout'), transport: 'mcp' }, notTested);
  }
  if (!notTested) {
    const feedUrl = `${context.apiBase}/feed/products`;
    const probe = await run.client.request(feedUrl, { headers: { Accept: 'application/json' } });
    // The discovery document names no feed: a merchant without one answers 404 there, or 401 before its routing.
    if (probe.status !== 200) run.report.notes.push(`ACP: no product feed at ${feedUrl} (${probe.status})`);
    else await run.runner.run(acpFeedChecks, { ...context, feedUrl } satisfies AcpFeedContext, scope('feed'));
  }
}

/** This store's exact figures (--store-specific), last: A-R1 spends the calling address's rate limit. */
async function runStoreFigures(run: Run, wants: (protocol: 'ucp' | 'acp') => boolean): Promise<void> {
  const session = await openStoreSession({
    client: run.client,
    base: run.base,
    lenient: run.options.lenient ?? false,
    profileUrl: run.options.profileUrl,
    schemaSets: run.schemaSet,
    onSchemaErrors: run.onSchemaErrors,
  });
  try {
    const checks = [...(wants('ucp') ? storeUcpChecks(session) : []), ...(wants('acp') ? storeAcpChecks(session) : [])];
    // Without a token the ACP figures fail one by one (Bearer undefined), not the run.
    if (checks.some((check) => check.protocol === 'acp')) await session.acpToken().catch(() => undefined);
    await run.runner.run(checks, session, { protocol: 'store' });
  } finally {
    await session.close();
  }
}

/** The ACP bearer token: the fixture's, or one from its OAuth client (client_credentials); else why there is none. */
async function acpCredentials(
  client: HttpClient,
  fixture: Fixture,
  base: string,
  notes: string[],
): Promise<{ token?: string; tokenReason?: string }> {
  const acp = fixture.acp;
  if (!acp)
    return {
      tokenReason:
        'the fixture has no acp credentials ({bearer_token} or {client_id, client_secret, token_url, scope})',
    };
  if ('bearer_token' in acp) return { token: acp.bearer_token };
  const tokenUrl = new URL(acp.token_url, base).href;
  try {
    const answer = await client.request(tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: acp.client_id,
        client_secret: acp.client_secret,
        ...(acp.scope ? { scope: acp.scope } : {}),
      }).toString(),
    });
    const token = answer.body?.access_token;
    if (answer.status === 200 && typeof token === 'string') return { token };
    const reason = `the token request to ${tokenUrl} answered ${answer.status} ${answer.text.slice(0, 120)}`;
    notes.push(`ACP: ${reason}`);
    return { tokenReason: reason };
  } catch (error) {
    return { tokenReason: `the token request to ${tokenUrl} failed: ${(error as Error).message}` };
  }
}
