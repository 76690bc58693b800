// The platform side of UCP negotiation: the runner plays an agent platform whose profile the merchant fetches from the
// UCP-Agent header. The profiles are served on 127.0.0.1 (the merchant must be allowed to fetch from there), or the
// user names one with --profile-url (then the negotiation checks that need other profiles are skipped).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The UCP version this store speaks (and the default of the profiles below). */
export const UCP_VERSION = '2026-04-08';

type Json = any;

/** One capability entry of a platform profile, as UCP's platform_schema wants it. */
export function capabilityEntry(name: string, version: string, extra: Record<string, unknown> = {}) {
  const short = name.replace(/^dev\.ucp\.shopping\./, '');
  return {
    version,
    spec: `https://ucp.dev/${version}/specification/${short}`,
    schema: `https://ucp.dev/${version}/schemas/shopping/${short}.json`,
    ...extra,
  };
}

/** A valid UCP platform profile (checkout and discount by default; fulfillment when asked). */
export function platformProfile(
  options: {
    version?: string;
    checkout?: boolean;
    discount?: boolean;
    fulfillment?: boolean;
    capabilities?: Record<string, Json>;
  } = {},
) {
  const { version = UCP_VERSION, checkout = true, discount = true, fulfillment = false } = options;
  const capabilities = options.capabilities ?? {
    ...(checkout ? { 'dev.ucp.shopping.checkout': [capabilityEntry('dev.ucp.shopping.checkout', UCP_VERSION)] } : {}),
    ...(fulfillment
      ? {
          'dev.ucp.shopping.fulfillment': [
            capabilityEntry('dev.ucp.shopping.fulfillment', UCP_VERSION, { extends: 'dev.ucp.shopping.checkout' }),
          ],
        }
      : {}),
    ...(discount
      ? {
          'dev.ucp.shopping.discount': [
            capabilityEntry('dev.ucp.shopping.discount', UCP_VERSION, { extends: 'dev.ucp.shopping.checkout' }),
          ],
        }
      : {}),
    ...(!checkout && !discount
      ? { 'dev.ucp.shopping.order': [capabilityEntry('dev.ucp.shopping.order', UCP_VERSION)] }
      : {}),
  };
  return {
    ucp: {
      version,
      services: {
        'dev.ucp.shopping': [
          {
            version,
            spec: `https://ucp.dev/${version}/specification/overview`,
            transport: 'rest',
            schema: `https://ucp.dev/${version}/services/shopping/rest.openapi.json`,
          },
        ],
      },
      capabilities,
      payment_handlers: {},
    },
  };
}

export interface ProfileServer {
  base: string;
  close(): Promise<void>;
}

/** Serves `profiles` (path → JSON) on 127.0.0.1; any other path is a 404. */
export async function serveProfiles(profiles: Record<string, unknown>): Promise<ProfileServer> {
  const server: Server = createServer((request, response) => {
    const found = profiles[(request.url ?? '').split('?')[0]!];
    response.writeHead(found ? 200 : 404, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(found ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * This store's profiles: `/full.json`, `/no-checkout.json`, `/no-discount.json`, `/old.json` (for the store-specific
 * checks and the capture script).
 */
export async function servePlatformProfiles(): Promise<{ server: ProfileServer; base: string }> {
  const server = await serveProfiles({
    '/full.json': platformProfile(),
    '/no-checkout.json': platformProfile({ checkout: false, discount: false }),
    '/no-discount.json': platformProfile({ discount: false }),
    '/old.json': platformProfile({ version: '2026-01-23' }),
  });
  return { server, base: server.base };
}
