// Date versioning of the checkout endpoints, and retirement notices on any endpoint.
import {
  API_VERSIONS,
  currentVersion,
  deprecationHeader,
  deprecationsFor,
  resolveApiVersion,
  sunsetHeader,
  type Deprecation,
} from '../domain/versioning.js';
import type { AppMiddleware } from './context.js';
import { BadRequest } from '../domain/errors.js';

/** The version a checkout request's API-Version header applies; a 400 unsupported_api_version when none does. */
export function appliedApiVersion(requested: string | undefined): string {
  const resolution = resolveApiVersion(requested || undefined);
  if (!resolution.ok) {
    throw new BadRequest('unsupported_api_version', resolution.reason, {
      param: 'API-Version',
      details: { supported_versions: API_VERSIONS.map((entry) => entry.version).reverse() },
    });
  }
  return resolution.version;
}

/** Resolves API-Version on checkout requests (400 unsupported_api_version) and echoes the version applied. */
export function checkoutVersioning(): AppMiddleware {
  return (ctx, next) => {
    // Node's own header map, and the list directly: the version applied is one of API_VERSIONS, a valid value.
    const requested = ctx.req.headers['api-version'];
    ctx.state.headers.set('API-Version', appliedApiVersion(typeof requested === 'string' ? requested : undefined));
    return next();
  };
}

/** The API-Version a checkout response carries when it failed before a version was resolved. */
export const DEFAULT_API_VERSION = currentVersion();

/** The headers announcing one retirement, written once. */
function noticeHeaders(entry: Deprecation, changelogUrl: string): Array<[string, string]> {
  return [
    ['Deprecation', deprecationHeader(entry)],
    ['Sunset', sunsetHeader(entry)],
    ['Link', `<${changelogUrl}>; rel="deprecation"; type="application/json"`],
  ];
}

/**
 * Adds Deprecation (RFC 9745), Sunset (RFC 8594) and a Link to the changelog to responses of retiring endpoints,
 * compiled for one route (its method, or undefined for a surface's 404 and 405; its path template): undefined where no
 * retirement can apply. On a route without path parameters, the retirements announced for its path are found here,
 * once (every spelling the router takes for that path, a trailing slash included, gets them); only a route whose path
 * has parameters (or a 404/405) tests the announced paths against the request's, and only those of the retirements
 * whose method it serves. The headers are rendered once either way, and added to the request's flat list.
 */
export function retirementNotices(
  deprecations: Deprecation[],
  changelogUrl: string,
  route: { method: string | undefined; path: string },
): AppMiddleware | undefined {
  const { method } = route;
  const candidates = deprecations.filter(
    (entry) => entry.method === '*' || method === undefined || entry.method === method,
  );
  if (candidates.length === 0) return undefined;
  const headers = new Map(candidates.map((entry) => [entry, noticeHeaders(entry, changelogUrl)]));
  if (method !== undefined && !/[{*:]/.test(route.path)) {
    // The route is this one path: the retirements announced for it are known now (a GET route serves HEAD too, so the
    // request's method still picks among them, as a string comparison).
    const announced = deprecationsFor(method, route.path, candidates).map((entry) => ({
      method: entry.method,
      headers: headers.get(entry)!,
    }));
    if (announced.length === 0) return undefined;
    return async (ctx, next) => {
      const first = announced.find((entry) => entry.method === '*' || entry.method === ctx.method);
      if (first) for (const [name, value] of first.headers) ctx.state.headers.set(name, value);
      await next();
    };
  }
  return async (ctx, next) => {
    const [first] = deprecationsFor(ctx.method, ctx.path, candidates);
    if (first) for (const [name, value] of headers.get(first)!) ctx.state.headers.set(name, value);
    await next();
  };
}
