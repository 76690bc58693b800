// UCP platform profiles: the platform names its profile in `UCP-Agent`; the business fetches it through the egress
// guard (src/services/egress.ts: public addresses only, https, 5 s, no redirects, at most 32 KiB), validates it against
// UCP's platform_schema of the version it declares (2026-08-25 or 2026-04-08), checks the version and intersects the
// capabilities (A.2 of the design). Strict negotiation checks what negotiation reads (the version, the capabilities'
// names and versions, the transports): a profile whose entries lack only the informative `spec` / `schema` URLs is used,
// with an info message saying so; a profile that is still invalid is refused, naming the first thing to fix. Only the outcome is
// kept, in an LRU bounded in bytes (TTL from Cache-Control, 60 s to 1 h; failures 10 s), and each fetch is counted
// against the address whose request caused it, so no client can make the business fetch, or remember, without bound.
// A profile that cannot be fetched is told to the client in one message whatever went wrong (the logs say what).
import { LRUCache } from 'lru-cache';
import { parseDictionary } from 'structured-headers';
import type { ProtocolConfig } from '../config.js';
import { RateLimited } from '../domain/errors.js';
import {
  isUcpVersion,
  ucpMessage,
  UCP_CHECKOUT,
  UCP_DISCOUNT,
  UCP_FULFILLMENT,
  UCP_VERSIONS,
  type UcpMessage,
  type UcpVersion,
} from '../domain/ucp-checkout.js';
import { jsonPath } from '../domain/protocol-session.js';
import { UCP_CART, UCP_CATALOG_LOOKUP, UCP_CATALOG_SEARCH } from '../domain/ucp-shopping.js';
import { UCP_ORDER } from '../domain/order-events.js';
import type { Logger } from '../log.js';
import type { LimitCounter } from '../ports.js';
import { protocolSchemaProblems } from '../protocols/schemas.js';
import type { ValidatorRegistry } from '../validators.js';
import { createEgress, type Egress } from './egress.js';
import type { Tracing } from '../tracing.js';

const FETCH_TIMEOUT_MS = 5_000;
/**
 * Real platform profiles are under 5 KB (UCP's examples; the conformance runner's is under 1 KB): services, a few
 * capabilities, payment handlers, signing keys. 32 KiB leaves six times that for a platform with many extensions, and
 * bounds what one fetch holds in memory and costs to parse and validate.
 */
export const MAX_PROFILE_BYTES = 32 * 1024;
const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 60 * 60_000;
const FAILURE_TTL_MS = 10_000;
/**
 * Bytes the profile outcomes may take, keys included: each entry counts its URL and message (UTF-16, 2 bytes a
 * character at most) plus ENTRY_BYTES. Thousands of platforms at typical URL lengths; never more, whatever is named.
 */
const PROFILE_CACHE_BYTES = 2 * 1024 * 1024;
/** What an entry costs beyond its strings: the LRU's slots, the outcome object, its TTL bookkeeping. */
const ENTRY_BYTES = 256;

const UNREACHABLE = `The platform profile could not be fetched: serve it with 200 at a public https address, without redirects, within ${FETCH_TIMEOUT_MS / 1000} s and ${MAX_PROFILE_BYTES / 1024} KiB.`;
const MALFORMED = "The platform profile is not a valid UCP platform profile (JSON valid against UCP's profile schema).";
const SERVED = UCP_VERSIONS.join(' and ');
/** The transports this business serves `dev.ucp.shopping` on; a platform must declare one of them. */
const TRANSPORTS = ['rest', 'mcp'];
/** The fields of a profile's entries that only inform (where to read about it); negotiation never reads them. */
const INFORMATIVE_FIELDS = ['spec', 'schema'] as const;
const INFORMATIVE_PLACEHOLDER = 'https://ucp.dev/';

/**
 * Why a profile cannot be used: its URL is not https (`invalid_profile_url`), it cannot be fetched
 * (`profile_unreachable`), it is not a valid platform profile (`profile_malformed`), or it declares another version
 * (`version_unsupported`). The UCP binding answers each with its status.
 */
export type ProfileProblem =
  'invalid_profile_url' | 'profile_unreachable' | 'profile_malformed' | 'version_unsupported';

/** What negotiation reads of a profile; nothing else of it is kept. */
export interface PlatformProfile {
  ucp: {
    version: string;
    services?: Record<string, Array<{ version: string; transport?: string }>>;
    capabilities?: Record<string, Array<{ version: string; config?: { webhook_url?: unknown } }>>;
  };
}

export interface Negotiated {
  /** The version every answer to this platform is given in: its profile's. */
  version: UcpVersion;
  checkout: boolean;
  discount: boolean;
  fulfillment: boolean;
  /** dev.ucp.shopping.cart, dev.ucp.shopping.catalog.search and .lookup: each on its own, without checkout. */
  cart: boolean;
  /** dev.ucp.shopping.discount on carts (it extends checkout and cart): declared with the cart capability. */
  cartDiscount: boolean;
  catalogSearch: boolean;
  catalogLookup: boolean;
  /** Whether the platform declares the order capability at the version (order reads and events). */
  order?: boolean;
  /** Where it subscribes to order events: the order capability's `config.webhook_url`, if it names one. */
  orderWebhookUrl?: string | undefined;
}

/** Every capability of this business: what the lenient policy proceeds with when a profile cannot be used. */
export const EVERY_CAPABILITY = {
  checkout: true,
  discount: true,
  fulfillment: true,
  cart: true,
  cartDiscount: true,
  catalogSearch: true,
  catalogLookup: true,
} as const satisfies Omit<Negotiated, 'version'>;

/**
 * A profile's outcome: what it negotiates (with info messages about the profile, such as informative fields it
 * lacks), or the problem to answer.
 */
export type ProfileResult =
  { ok: true; negotiated: Negotiated; notes: UcpMessage[] } | { ok: false; problem: ProfileProblem; content: string };

/** The bytes of parsed `UCP-Agent` headers kept (a platform sends the same one every time), headers included. */
const PARSED_HEADER_BYTES = 1024 * 1024;

/**
 * The profile URL of a `UCP-Agent` header (an RFC 8941 dictionary with an sf-string `profile`); undefined when unusable.
 * Each reader keeps the headers it parsed last (the binding builds one for the process).
 */
export type ProfileUrlReader = (header: string) => string | undefined;

export function createProfileUrlReader(): ProfileUrlReader {
  const profileUrls = new LRUCache<string, { url: string | undefined }>({
    max: 10_000,
    maxSize: PARSED_HEADER_BYTES,
    sizeCalculation: (parsed, header) => 2 * (header.length + (parsed.url?.length ?? 0)) + ENTRY_BYTES,
  });
  return (header) => {
    if (!header) return undefined;
    let parsed = profileUrls.get(header);
    if (!parsed) {
      parsed = { url: parseProfileUrl(header) };
      profileUrls.set(header, parsed);
    }
    return parsed.url;
  };
}

function parseProfileUrl(header: string): string | undefined {
  try {
    const member = parseDictionary(header).get('profile');
    if (!member || typeof member[0] !== 'string') return undefined;
    const url = new URL(member[0]);
    return url.protocol === 'https:' || url.protocol === 'http:' ? member[0] : undefined;
  } catch {
    return undefined;
  }
}

const failure = (problem: ProfileProblem, content: string): ProfileResult => ({ ok: false, problem, content });
const unreachable = () => failure('profile_unreachable', UNREACHABLE);

function ttlOf(cacheControl: string | string[] | undefined): number {
  const maxAge = /(?:^|,)\s*max-age=(\d+)/i.exec(String(cacheControl ?? ''))?.[1];
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, maxAge ? Number(maxAge) * 1000 : 0));
}

/**
 * UCP's intersection at the profile's version: common capability names at that exact version (extensions only with
 * their parent), over a common transport of `dev.ucp.shopping`.
 */
export function negotiate(profile: PlatformProfile & { ucp: { version: UcpVersion } }): Negotiated {
  const { version } = profile.ucp;
  const offers = (name: string) =>
    (profile.ucp.capabilities?.[name] ?? []).some((capability) => capability.version === version);
  const transport = (profile.ucp.services?.['dev.ucp.shopping'] ?? []).some(
    (service) => service.version === version && TRANSPORTS.includes(service.transport ?? ''),
  );
  const checkout = transport && offers(UCP_CHECKOUT);
  const order = (profile.ucp.capabilities?.[UCP_ORDER] ?? []).find((capability) => capability.version === version);
  const webhookUrl = order?.config?.webhook_url;
  return {
    version,
    checkout,
    discount: checkout && offers(UCP_DISCOUNT),
    fulfillment: checkout && offers(UCP_FULFILLMENT),
    cart: transport && offers(UCP_CART),
    cartDiscount: transport && offers(UCP_CART) && offers(UCP_DISCOUNT),
    catalogSearch: transport && offers(UCP_CATALOG_SEARCH),
    catalogLookup: transport && offers(UCP_CATALOG_LOOKUP),
    order: transport && order !== undefined,
    orderWebhookUrl: transport && typeof webhookUrl === 'string' ? webhookUrl : undefined,
  };
}

/**
 * The profile with every informative field its registries' entries lack filled with a placeholder, and the JSONPaths
 * of those it filled: what strict negotiation tolerates (a platform such as @shopify/ucp-cli 0.9.0's managed profile
 * declares its capabilities by name and version only).
 */
export function withInformativeFields(profile: unknown): { profile: unknown; filled: string[]; missing: number } {
  const ucp = (profile as { ucp?: unknown } | null)?.ucp;
  if (typeof ucp !== 'object' || ucp === null) return { profile, filled: [], missing: 0 };
  // The note names the first few fields filled and counts the rest: naming each of a large profile's thousands of
  // entries would cost tens of milliseconds of one request's CPU (bench/stalls.ts).
  const filled: string[] = [];
  let missing = 0;
  const registries: Record<string, unknown> = {};
  for (const registry of ['services', 'capabilities', 'payment_handlers'] as const) {
    const entries = (ucp as Record<string, unknown>)[registry];
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) continue;
    registries[registry] = Object.fromEntries(
      Object.entries(entries).map(([name, list]) => [
        name,
        Array.isArray(list)
          ? list.map((entry: unknown, index) => {
              if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
              let copy: Record<string, unknown> | undefined;
              for (const field of INFORMATIVE_FIELDS) {
                if (field in entry) continue;
                copy ??= { ...entry };
                copy[field] = INFORMATIVE_PLACEHOLDER;
                if (missing++ < NAMED_FIELDS) filled.push(jsonPath(['ucp', registry, name, index, field]));
              }
              return copy ?? entry;
            })
          : list,
      ]),
    );
  }
  return { profile: { ...(profile as object), ucp: { ...ucp, ...registries } }, filled, missing };
}

/** How many of the fields filled in an informative note names. */
const NAMED_FIELDS = 5;

/** The info message of a profile used without the informative fields it lacks. */
function informativeNote(filled: string[], missing: number): UcpMessage {
  const listed = filled.join(', ') + (missing > filled.length ? ` and ${missing - filled.length} more` : '');
  return ucpMessage({
    type: 'info',
    code: 'profile_informative_fields_missing',
    content: `The platform profile was used although it lacks informative fields that UCP's profile schema requires (${listed}); negotiation does not read them.`,
  });
}

/** The profile checked against its version's platform schema, tolerating missing informative fields. */
function checkedProfile(
  validators: ValidatorRegistry,
  profile: unknown,
  version: UcpVersion,
): { ok: true; profile: PlatformProfile; notes: UcpMessage[] } | { ok: false; problem: string } {
  const schema = version === '2026-08-25' ? 'ucp@2026-08-25.platform_profile' : 'ucp.platform_profile';
  if (!protocolSchemaProblems(validators, schema, profile).length)
    return { ok: true, profile: profile as PlatformProfile, notes: [] };
  const tolerated = withInformativeFields(profile);
  const problems = protocolSchemaProblems(validators, schema, tolerated.profile);
  if (problems.length) {
    const first = problems[0]!;
    const at =
      first.path === '/'
        ? '$'
        : jsonPath(
            first.path
              .split('/')
              .slice(1)
              .map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
          );
    return { ok: false, problem: `${at} ${first.message.replace(/ \{.*\}$/, '')}` };
  }
  return {
    ok: true,
    profile: tolerated.profile as PlatformProfile,
    notes: tolerated.missing ? [informativeNote(tolerated.filled, tolerated.missing)] : [],
  };
}

async function fetchProfile(
  egress: Egress,
  url: string,
  log: Logger,
  validators: ValidatorRegistry,
): Promise<{ result: ProfileResult; ttl: number }> {
  const answer = await egress.send(url, {
    method: 'GET',
    headers: { Accept: 'application/json', 'User-Agent': 'storefront-ucp/1' },
    timeoutMs: FETCH_TIMEOUT_MS,
    maxResponseBytes: MAX_PROFILE_BYTES,
  });
  const refused = (reason: string) => {
    log.info({ profileUrl: url, reason }, 'platform profile not usable');
    return { result: unreachable(), ttl: FAILURE_TTL_MS };
  };
  if (!answer.ok) return refused(`${answer.failure}: ${answer.detail}`);
  if (answer.status !== 200) return refused(`answered ${answer.status}`);
  let profile: unknown;
  try {
    profile = JSON.parse(answer.body.toString('utf8'));
  } catch {
    log.info({ profileUrl: url, reason: 'not JSON' }, 'platform profile not usable');
    return { result: failure('profile_malformed', MALFORMED), ttl: FAILURE_TTL_MS };
  }
  const ttl = ttlOf(answer.headers['cache-control']);
  // The version first: it says which schema the rest is checked against.
  const declared = (profile as { ucp?: { version?: unknown } } | null)?.ucp?.version;
  if (typeof declared === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(declared) && !isUcpVersion(declared)) {
    return {
      result: failure(
        'version_unsupported',
        `The platform profile declares UCP ${declared}; this business supports ${SERVED}: declare one of them as ucp.version.`,
      ),
      ttl,
    };
  }
  const checked = checkedProfile(validators, profile, isUcpVersion(declared) ? declared : UCP_VERSIONS[0]);
  if (!checked.ok) {
    log.info({ profileUrl: url, reason: checked.problem }, 'platform profile not usable');
    // Naming the field to fix describes the fetched document: a document that declares a UCP version this business
    // serves is a platform's profile, and its platform is told what to fix; of anything else (an HTML page, some
    // other JSON) the caller learns only that it is no profile, as of a document that is not JSON.
    const named = isUcpVersion(declared) ? `${MALFORMED} Fix ${checked.problem}.` : MALFORMED;
    return { result: failure('profile_malformed', named), ttl: FAILURE_TTL_MS };
  }
  const valid = checked.profile as PlatformProfile & { ucp: { version: UcpVersion } };
  return { result: { ok: true, negotiated: negotiate(valid), notes: checked.notes }, ttl };
}

/** Whose request a fetch is for: its address is charged, and told when over its budget. */
interface FetchContext {
  address: string;
  retryAfterSeconds?: number;
}

/** Fetches (or recalls) and checks a platform profile for a request from `address`. */
export type ProfileResolver = (url: string, address: string) => Promise<ProfileResult>;

export interface ProfileResolverParts {
  config: ProtocolConfig;
  /** EGRESS_ALLOWED_HOSTS; UCP_INSECURE_PROFILE_HOSTS count as named too. */
  egressAllowedHosts: readonly string[];
  /** Profile fetches per address (UCP_PROFILE_FETCHES_PER_MINUTE), shared by the instances through Redis. */
  fetchBudget: LimitCounter;
  log: Logger;
  /** Checks the profiles against the UCP schema. */
  validators: ValidatorRegistry;
  /** The tracer, when tracing is on: each fetch is a span and carries the request's traceparent. */
  tracing?: Tracing;
}

/** Fetches (or recalls) and checks a platform profile: URL rules, reachability, schema, version, negotiation. */
export function createProfileResolver({
  config,
  egressAllowedHosts,
  fetchBudget,
  log,
  validators,
  tracing,
}: ProfileResolverParts): ProfileResolver {
  const egress = createEgress([...egressAllowedHosts, ...config.insecureProfileHosts], undefined, tracing);
  // Requests naming a profile not yet cached share one fetch of it, rather than each fetching it (a cold start under
  // load would otherwise fetch one profile once per connection); the request that starts it is the one charged.
  const cache = new LRUCache<string, ProfileResult, FetchContext>({
    max: 10_000,
    maxSize: PROFILE_CACHE_BYTES,
    sizeCalculation: (result, url) =>
      2 *
        (url.length +
          (result.ok ? result.notes.reduce((n, note) => n + note.content.length, 0) : result.content.length)) +
      ENTRY_BYTES,
    // A fetch in flight whose entry is evicted still answers the requests waiting on it, rather than rejecting them:
    // lru-cache aborts it otherwise.
    ignoreFetchAbort: true,
    fetchMethod: async (url, _stale, { options, context }) => {
      const { rejection } = await fetchBudget.count(context.address);
      if (rejection) {
        // Nothing is fetched nor stored (an expired copy stays expired): only this address is refused.
        context.retryAfterSeconds = rejection.retryAfterSeconds;
        return undefined;
      }
      const fetched = await fetchProfile(egress, url, log, validators);
      options.ttl = fetched.ttl;
      return fetched.result;
    },
  });

  async function recalled(url: string, address: string): Promise<ProfileResult> {
    // Two tries: a fetch this request joined may have been refused for the address that started it, not for this one.
    for (let attempt = 0; attempt < 2; attempt++) {
      const context: FetchContext = { address };
      const result = await cache.fetch(url, { context });
      if (result) return result;
      if (context.retryAfterSeconds !== undefined)
        throw new RateLimited(
          `More than ${fetchBudget.limit} platform profiles fetched for this address in a minute; retry after Retry-After seconds.`,
          context.retryAfterSeconds,
        );
    }
    return unreachable();
  }

  return async (url, address) => {
    const parsed = new URL(url);
    const insecureAllowed = config.insecureProfileHosts.includes(parsed.hostname);
    if (parsed.protocol !== 'https:' && !insecureAllowed) {
      return failure('invalid_profile_url', `The platform profile URL must be https: ${url}.`);
    }
    return recalled(url, address);
  };
}
