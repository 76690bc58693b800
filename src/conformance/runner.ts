// The conformance runner: points at any UCP or ACP merchant, discovers what it advertises (/.well-known/ucp,
// /.well-known/acp.json), states the versions found and the one it tests, and runs every check of every advertised
// capability on every advertised transport, validating each body against that version's schemas in protocols/. The
// checks live in checks/, one file per protocol and capability; this store's exact figures (checks/store.ts) run only
// with `storeSpecific`. It imports nothing of the store it may be pointed at.
import type { Json } from './client.js';
import { HttpClient, REQUEST_TIMEOUT_MS, UnreachableError } from './client.js';
import { acpCheckoutChecks } from './checks/acp-checkout.js';
import type { AcpContext } from './checks/acp-context.js';
import { acpDiscountChecks } from './checks/acp-discount.js';
import { CheckFailure, CheckSkipped, type Check } from './checks/check.js';
import { discoverAcp, discoverUcp, discoveryChecks, type DiscoveryContext } from './checks/discovery.js';
import { storeAcpChecks } from './checks/store-acp.js';
import { openStoreSession } from './checks/store-session.js';
import { storeUcpChecks } from './checks/store-ucp.js';
import { CATALOG_SEARCH, itemsFromSearch, searchCatalog, ucpCatalogChecks } from './checks/ucp-catalog.js';
import { ucpCheckoutChecks, ucpRestChecks } from './checks/ucp-checkout.js';
import type { UcpContext, UcpProfiles } from './checks/ucp-context.js';
import { ucpDiscountChecks } from './checks/ucp-discount.js';
import { ucpMcpChecks, type UcpMcpContext } from './checks/ucp-mcp.js';
import { ucpNegotiationChecks } from './checks/ucp-negotiation.js';
import { mcpSession, mcpTransport, restTransport, type UcpTransportSetup } from './checks/ucp-transport.js';
import type { Fixture, FixtureItem } from './fixture.js';
import { capabilityEntry, platformProfile, serveProfiles, type ProfileServer } from './profile.js';
import { planLine, resultLine, summaryLine, type CheckResult, type Report } from './report.js';
import { schemaSet } from './schemas.js';

export { platformProfile, UCP_VERSION } from './profile.js';

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
  /** Also run this store's exact figures (checks/store.ts): for this project's own tests. */
  storeSpecific?: boolean;
  timeoutMs?: number;
  log?: (line: string) => void;
}

const DISCOUNT = 'dev.ucp.shopping.discount';
const CHECKOUT = 'dev.ucp.shopping.checkout';

interface Scope {
  protocol: string;
  capability?: string;
  transport?: string;
  version?: string;
}

export async function runConformance(options: RunnerOptions): Promise<Report> {
  const log = options.log ?? ((line: string) => console.log(line));
  const base = options.baseUrl.replace(/\/+$/, '');
  const client = new HttpClient(options.timeoutMs ?? REQUEST_TIMEOUT_MS);
  const fixture = options.fixture ?? {};
  const report: Report = {
    target: base,
    startedAt: new Date().toISOString(),
    plans: [],
    notes: [],
    checks: [],
    summary: { total: 0, pass: 0, fail: 0, skip: 0, responses: 0, schemaErrors: 0 },
  };
  const onSchemaErrors = (count: number) => (report.summary.schemaErrors += count);
  const wants = (protocol: 'ucp' | 'acp') => !options.protocol || options.protocol === protocol;

  const record = (
    check: Check<never>,
    scope: Scope,
    outcome: CheckResult['outcome'],
    message: string | undefined,
    started: number,
  ) => {
    const result: CheckResult = {
      id: check.id,
      title: check.title,
      ...scope,
      spec: check.spec.replaceAll('{version}', scope.version ?? 'latest'),
      outcome,
      ...(message !== undefined ? { message } : {}),
      durationMs: Date.now() - started,
    };
    delete (result as Scope).version;
    report.checks.push(result);
    log(resultLine(result));
  };
  async function run<Context>(checks: Check<Context>[], context: Context, scope: Scope, skipReason?: string) {
    for (const check of checks) {
      const started = Date.now();
      if (skipReason) {
        record(check as Check<never>, scope, 'skip', skipReason, started);
        continue;
      }
      try {
        await check.run(context);
        record(check as Check<never>, scope, 'pass', undefined, started);
      } catch (error) {
        if (error instanceof CheckSkipped) record(check as Check<never>, scope, 'skip', error.message, started);
        else if (error instanceof CheckFailure) record(check as Check<never>, scope, 'fail', error.message, started);
        else if (error instanceof UnreachableError)
          record(check as Check<never>, scope, 'fail', `expected an answer, got none: ${error.message}`, started);
        // A merchant answering something the check did not foresee fails the check, never the run.
        else
          record(
            check as Check<never>,
            scope,
            'fail',
            `expected a protocol answer, got one the check could not read: ${String(error)}`,
            started,
          );
      }
    }
  }

  log(`storefront-conformance → ${base}`);
  const ucp = wants('ucp') ? await discoverUcp(client, base, report.notes) : undefined;
  const acp = wants('acp') ? await discoverAcp(client, base, report.notes) : undefined;
  for (const plan of [ucp?.plan, acp?.plan]) if (plan) report.plans.push(plan);
  for (const plan of report.plans) log(planLine(plan));
  const noteCount = report.notes.length;
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
      currency: 'usd',
    },
    onSchemaErrors,
  };
  if (ucp) await run(discoveryChecks.slice(0, 1), discovery, { protocol: 'discovery', version: ucp.plan.tested });
  if (acp) await run(discoveryChecks.slice(1), discovery, { protocol: 'discovery', version: acp.plan.tested });

  let discoveredItems: FixtureItem[] = [];
  let itemsReason: string | undefined;
  let profileServer: ProfileServer | undefined;
  try {
    // UCP
    if (ucp) {
      const version = ucp.plan.tested;
      const notTested = version ? undefined : ucp.plan.reason;
      const capabilities = new Set(ucp.capabilities.keys());
      const schemas = version ? schemaSet('ucp', version) : undefined;
      let profiles: UcpProfiles = { full: options.profileUrl ?? '' };
      if (version && !options.profileUrl) {
        const entries = (names: string[]) =>
          Object.fromEntries(
            names.map((name) => {
              const entry: Json = ucp.capabilities.get(name) ?? {};
              const extra =
                typeof entry.extends === 'string' || Array.isArray(entry.extends) ? { extends: entry.extends } : {};
              return [name, [capabilityEntry(name, version, extra)]];
            }),
          );
        const all = [...capabilities];
        const extendsCheckout = (name: string) => {
          const parent = ucp.capabilities.get(name)?.extends;
          return parent === CHECKOUT || (Array.isArray(parent) && parent.includes(CHECKOUT));
        };
        const withoutCheckout = all.filter((name) => name !== CHECKOUT && !extendsCheckout(name));
        profileServer = await serveProfiles({
          '/full.json': platformProfile({ version, capabilities: entries(all) }),
          '/no-discount.json': platformProfile({
            version,
            capabilities: entries(all.filter((name) => name !== DISCOUNT)),
          }),
          '/no-checkout.json': platformProfile({
            version,
            capabilities: withoutCheckout.length
              ? entries(withoutCheckout)
              : { 'dev.ucp.shopping.order': [capabilityEntry('dev.ucp.shopping.order', version)] },
          }),
          '/unsupported-version.json': platformProfile({ version: '2000-01-01', capabilities: entries(all) }),
        });
        profiles = {
          full: `${profileServer.base}/full.json`,
          noDiscount: `${profileServer.base}/no-discount.json`,
          noCheckout: `${profileServer.base}/no-checkout.json`,
          unsupportedVersion: `${profileServer.base}/unsupported-version.json`,
          missing: `${profileServer.base}/missing.json`,
        };
      }

      // Items: the fixture's, else the first products of the merchant's catalog search.
      if (fixture.items?.length) discoveredItems = fixture.items;
      else if (version && capabilities.has(CATALOG_SEARCH) && ucp.endpoints.rest) {
        try {
          discoveredItems = itemsFromSearch(schemas!, await searchCatalog(client, ucp.endpoints.rest, profiles.full));
          itemsReason = discoveredItems.length ? undefined : 'the fixture has no items and catalog search found none';
          if (discoveredItems.length)
            log(`NOTE items from catalog search: ${discoveredItems.map((item) => item.id).join(', ')}`);
        } catch (error) {
          itemsReason = `the fixture has no items and catalog search failed: ${(error as Error).message}`;
        }
      } else itemsReason = 'the fixture has no items and the merchant advertises no UCP catalog search to find some';

      if (version && capabilities.has(CATALOG_SEARCH)) {
        const context = {
          ...ucpContextBase(),
          restEndpoint: ucp.endpoints.rest,
          profile: profiles.full,
        } as UcpContext & { restEndpoint?: string; profile: string };
        await run(ucpCatalogChecks, context, {
          protocol: 'ucp',
          capability: 'catalog.search',
          transport: 'rest',
          version,
        });
      }

      function ucpContextBase(): Omit<UcpContext, 'transport'> {
        return {
          client,
          schemas: schemas!,
          version: version!,
          capabilities,
          items: discoveredItems,
          itemsReason,
          fixture,
          profiles,
          lenient: options.lenient ?? false,
          checkouts: [],
        };
      }

      const transports = (['rest', 'mcp'] as const).filter((name) => version && ucp.endpoints[name]);
      if (!version)
        await run(
          [...ucpCheckoutChecks, ...ucpRestChecks],
          {} as UcpContext,
          { protocol: 'ucp', capability: 'checkout' },
          notTested,
        );
      if (version && !transports.length) log('NOTE UCP: no REST or MCP endpoint is advertised at the tested version');
      for (const other of ucp.endpoints.other) report.notes.push(`UCP transport ${other}: no checks in this runner`);
      for (const name of transports) {
        const scope = (capability: string): Scope => ({ protocol: 'ucp', capability, transport: name, version });
        const checkouts: Json[] = [];
        const setup: UcpTransportSetup = {
          client,
          schemas: schemas!,
          endpoint: ucp.endpoints[name]!,
          profile: profiles.full,
          checkouts,
          onSchemaErrors,
        };
        const transport = name === 'rest' ? restTransport(setup) : mcpTransport(setup);
        const context: UcpContext = { ...ucpContextBase(), transport, checkouts };
        const withoutCheckout = capabilities.has(CHECKOUT)
          ? undefined
          : 'the merchant does not advertise dev.ucp.shopping.checkout';
        if (name === 'mcp') {
          const mcpContext: UcpMcpContext = {
            ...context,
            session: mcpSession(client, ucp.endpoints.mcp!),
            rest: ucp.endpoints.rest ? restTransport({ ...setup, endpoint: ucp.endpoints.rest }) : undefined,
          };
          await run(ucpMcpChecks, mcpContext, scope('mcp'));
        }
        const checkoutChecks = ucpCheckoutChecks.slice(0, -1);
        const totals = ucpCheckoutChecks.slice(-1);
        await run(checkoutChecks, context, scope('checkout'), withoutCheckout);
        if (name === 'rest') await run(ucpRestChecks, context, scope('checkout'), withoutCheckout);
        await run(ucpNegotiationChecks, context, scope('negotiation'), withoutCheckout);
        await run(
          ucpDiscountChecks,
          context,
          scope('discount'),
          withoutCheckout ??
            (capabilities.has(DISCOUNT) ? undefined : 'the merchant does not advertise dev.ucp.shopping.discount'),
        );
        await run(totals, context, scope('checkout'), withoutCheckout);
      }
      const checked = new Set([CHECKOUT, DISCOUNT, CATALOG_SEARCH]);
      for (const capability of capabilities)
        if (!checked.has(capability)) {
          const check: Check<never> = {
            id: `ucp.capability.${capability.replace(/^dev\.ucp\.shopping\./, '')}`,
            title: `${capability} is advertised`,
            spec: `UCP {version}, ${capability}`,
            run: async () => undefined,
          };
          await run(
            [check],
            undefined as never,
            { protocol: 'ucp', capability, version },
            'this runner has no checks for this capability yet',
          );
        }
    }

    // ACP
    if (acp) {
      const version = acp.plan.tested;
      const notTested = version
        ? acp.apiBase
          ? undefined
          : 'the discovery document has no api_base_url'
        : acp.plan.reason;
      const context: AcpContext = {
        client,
        // Never used when the version is not tested: every check is skipped then.
        schemas: version ? schemaSet('acp', version) : (undefined as never),
        version: version ?? '',
        apiBase: acp.apiBase ?? '',
        extensions: acp.extensions,
        currency: acp.currency,
        items: fixture.items?.length ? fixture.items : discoveredItems,
        itemsReason:
          fixture.items?.length || discoveredItems.length ? undefined : (itemsReason ?? 'the fixture has no items'),
        fixture,
        sessions: [],
        onSchemaErrors,
      };
      if (!notTested) Object.assign(context, await acpCredentials(client, fixture, base, report.notes));
      if (!fixture.items?.length && discoveredItems.length && !notTested)
        log('NOTE ACP: using the items found through UCP catalog search');
      const scope = (capability: string): Scope => ({ protocol: 'acp', capability, transport: 'rest', version });
      await run(acpCheckoutChecks, context, scope('checkout'), notTested);
      await run(
        acpDiscountChecks,
        context,
        scope('discount'),
        notTested ??
          (acp.extensions.has('discount') ? undefined : 'the merchant does not advertise the discount extension'),
      );
      if (acp.transports.includes('mcp')) report.notes.push('ACP transport mcp: no checks in this runner');
    }

    if (options.storeSpecific) {
      const session = await openStoreSession({
        client,
        base,
        lenient: options.lenient ?? false,
        profileUrl: options.profileUrl,
        onSchemaErrors,
      });
      try {
        const checks = [
          ...(wants('ucp') ? storeUcpChecks(session) : []),
          ...(wants('acp') ? storeAcpChecks(session) : []),
        ];
        // Without a token the ACP checks fail one by one (Bearer undefined), not the run.
        if (checks.some((check) => check.protocol === 'acp')) await session.acpToken().catch(() => undefined);
        await run(checks, session, { protocol: 'store' });
      } finally {
        await session.close();
      }
    }
  } finally {
    await profileServer?.close();
  }

  for (const note of report.notes.slice(noteCount)) log(`NOTE ${note}`);
  const count = (outcome: CheckResult['outcome']) => report.checks.filter((check) => check.outcome === outcome).length;
  report.summary = {
    total: report.checks.length,
    pass: count('pass'),
    fail: count('fail'),
    skip: count('skip'),
    responses: client.responses,
    schemaErrors: report.summary.schemaErrors,
  };
  log(summaryLine(report.summary));
  return report;
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
