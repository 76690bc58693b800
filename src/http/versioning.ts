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
  return async (ctx, next) => {
    ctx.set('API-Version', appliedApiVersion(ctx.get('API-Version')));
    await next();
  };
}

/** The API-Version a checkout response carries when it failed before a version was resolved. */
export const DEFAULT_API_VERSION = currentVersion();

/** Adds Deprecation (RFC 9745), Sunset (RFC 8594) and a Link to the changelog to responses of retiring endpoints. */
export function retirementNotices(deprecations: Deprecation[], changelogUrl: string): AppMiddleware {
  return async (ctx, next) => {
    const [first] = deprecationsFor(ctx.method, ctx.path, deprecations);
    if (first) {
      ctx.set('Deprecation', deprecationHeader(first));
      ctx.set('Sunset', sunsetHeader(first));
      ctx.set('Link', `<${changelogUrl}>; rel="deprecation"; type="application/json"`);
    }
    await next();
  };
}
