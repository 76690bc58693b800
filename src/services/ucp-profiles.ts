// UCP platform profiles: the platform names its profile in `UCP-Agent`; the business fetches it (https only, 5 s, no
// redirects, at most 256 KiB), validates it against UCP's platform_schema, checks the version and intersects the
// capabilities (A.2 of the design). Results are kept in an LRU (TTL from Cache-Control, 60 s to 1 h; failures 10 s).
import { LRUCache } from 'lru-cache';
import { parseDictionary } from 'structured-headers';
import type { ProtocolConfig } from '../config.js';
import { UCP_CHECKOUT, UCP_DISCOUNT, UCP_VERSION } from '../domain/ucp-checkout.js';
import { protocolSchemaProblems } from '../protocols/schemas.js';

const FETCH_TIMEOUT_MS = 5_000;
export const MAX_PROFILE_BYTES = 256 * 1024;
const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 60 * 60_000;
const FAILURE_TTL_MS = 10_000;

export type ProfileProblem =
  | { status: 400; code: 'invalid_profile_url' }
  | { status: 424; code: 'profile_unreachable' }
  | { status: 422; code: 'profile_malformed' | 'version_unsupported' };

export interface PlatformProfile {
  ucp: { version: string; capabilities?: Record<string, Array<{ version: string }>> };
}

export type ProfileResult =
  { ok: true; profile: PlatformProfile } | { ok: false; problem: ProfileProblem; content: string };

export interface Negotiated {
  checkout: boolean;
  discount: boolean;
}

/** How many distinct `UCP-Agent` headers keep their parsed profile URL (a platform sends the same one every time). */
const PARSED_HEADERS = 1_000;
const profileUrls = new LRUCache<string, { url: string | undefined }>({ max: PARSED_HEADERS });

/** The profile URL of a `UCP-Agent` header (an RFC 8941 dictionary with an sf-string `profile`); undefined when unusable. */
export function profileUrlOf(header: string): string | undefined {
  if (!header) return undefined;
  let parsed = profileUrls.get(header);
  if (!parsed) {
    parsed = { url: parseProfileUrl(header) };
    profileUrls.set(header, parsed);
  }
  return parsed.url;
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

function ttlOf(cacheControl: string | null): number {
  const maxAge = /(?:^|,)\s*max-age=(\d+)/i.exec(cacheControl ?? '')?.[1];
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, maxAge ? Number(maxAge) * 1000 : 0));
}

async function readLimited(response: Response): Promise<string | undefined> {
  if (Number(response.headers.get('content-length')) > MAX_PROFILE_BYTES) return undefined;
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_PROFILE_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function fetchProfile(url: string): Promise<{ result: ProfileResult; ttl: number }> {
  let response: Response;
  let text: string | undefined;
  try {
    response = await fetch(url, {
      headers: { Accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      return {
        result: failure(
          { status: 424, code: 'profile_unreachable' },
          `The platform profile at ${url} answered ${response.status}; a profile must be served with 200 and no redirect.`,
        ),
        ttl: FAILURE_TTL_MS,
      };
    }
    text = await readLimited(response);
  } catch {
    return {
      result: failure(
        { status: 424, code: 'profile_unreachable' },
        `The platform profile at ${url} could not be fetched within ${FETCH_TIMEOUT_MS / 1000} s.`,
      ),
      ttl: FAILURE_TTL_MS,
    };
  }
  if (text === undefined)
    return {
      result: failure(
        { status: 424, code: 'profile_unreachable' },
        `The platform profile at ${url} is larger than ${MAX_PROFILE_BYTES / 1024} KiB.`,
      ),
      ttl: FAILURE_TTL_MS,
    };
  let profile: unknown;
  try {
    profile = JSON.parse(text);
  } catch {
    return {
      result: failure({ status: 422, code: 'profile_malformed' }, `The platform profile at ${url} is not JSON.`),
      ttl: FAILURE_TTL_MS,
    };
  }
  const problems = protocolSchemaProblems('ucp.platform_profile', profile);
  if (problems.length) {
    const first = problems[0]!;
    return {
      result: failure(
        { status: 422, code: 'profile_malformed' },
        `The platform profile at ${url} is not a valid UCP platform profile: ${first.path} ${first.message}.`,
      ),
      ttl: FAILURE_TTL_MS,
    };
  }
  return {
    result: { ok: true, profile: profile as PlatformProfile },
    ttl: ttlOf(response.headers.get('cache-control')),
  };
}

export type ProfileResolver = (url: string) => Promise<ProfileResult>;

/** Fetches (or recalls) and checks a platform profile: URL rules, reachability, schema, version. */
export function createProfileResolver(config: ProtocolConfig): ProfileResolver {
  // Requests naming a profile not yet cached share one fetch of it, rather than each fetching it (a cold start under
  // load would otherwise fetch one profile once per connection).
  const cache = new LRUCache<string, ProfileResult>({
    max: 1_000,
    // A fetch in flight whose entry is evicted (over a thousand profiles asked at once) still answers the requests
    // waiting on it, rather than rejecting them: lru-cache aborts it otherwise.
    ignoreFetchAbort: true,
    fetchMethod: async (url, _stale, { options }) => {
      const fetched = await fetchProfile(url);
      options.ttl = fetched.ttl;
      return fetched.result;
    },
  });
  return async (url) => {
    const parsed = new URL(url);
    const insecureAllowed = config.insecureProfileHosts.includes(parsed.hostname.toLowerCase());
    if (parsed.protocol !== 'https:' && !insecureAllowed) {
      return failure({ status: 400, code: 'invalid_profile_url' }, `The platform profile URL must be https: ${url}.`);
    }
    // fetchProfile answers every failure as a result, and an evicted fetch is not aborted: the fetch resolves with one.
    const result = (await cache.fetch(url))!;
    if (result.ok && result.profile.ucp.version !== UCP_VERSION) {
      return failure(
        { status: 422, code: 'version_unsupported' },
        `The platform profile declares UCP ${result.profile.ucp.version}; this business supports ${UCP_VERSION} only.`,
      );
    }
    return result;
  };
}

/** UCP's intersection: common capability names at an exact common version; extensions only with their parent. */
export function negotiate(profile: PlatformProfile): Negotiated {
  const offers = (name: string) =>
    (profile.ucp.capabilities?.[name] ?? []).some((capability) => capability.version === UCP_VERSION);
  const checkout = offers(UCP_CHECKOUT);
  return { checkout, discount: checkout && offers(UCP_DISCOUNT) };
}
