// Which protocol schema a response body of the bindings must satisfy, by path and status: the yardstick the tests and
// the conformance runner apply to every body they receive (A.13 and B.12 of the design).
import { protocolSchemaProblems, type ProtocolSchemaName, type SchemaProblem } from './schemas.js';
import type { ValidatorRegistry } from '../validators.js';

/** The catalog and cart answers by path (a cart's id as `{id}`). */
const UCP_SHOPPING_ANSWERS: Record<string, 'cart_response' | `catalog_${'search' | 'lookup' | 'get_product'}_response`> = {
  '/ucp/carts': 'cart_response',
  '/ucp/carts/{id}': 'cart_response',
  '/ucp/catalog/search': 'catalog_search_response',
  '/ucp/catalog/lookup': 'catalog_lookup_response',
  '/ucp/catalog/product': 'catalog_get_product_response',
};

/** The schemas a body must pass; none for answers whose shape the protocol defines only in prose (UCP protocol errors). */
export function protocolSchemasFor(path: string, status: number, body: unknown): ProtocolSchemaName[] {
  const object = (body ?? {}) as Record<string, any>;
  // UCP bodies by the version they say they are in (2026-08-25's schemas, or 2026-04-08's).
  const ucp = (
    name:
      | 'checkout_response'
      | 'checkout_with_discount'
      | 'cart_with_discount'
      | 'checkout_with_fulfillment'
      | 'business_profile'
      | 'cart_response'
      | 'catalog_search_response'
      | 'catalog_lookup_response'
      | 'catalog_get_product_response'
      | 'order_response',
  ): ProtocolSchemaName =>
    object.ucp?.version === '2026-08-25' ? `ucp@2026-08-25.${name}` : `ucp.${name}`;
  if (path === '/.well-known/ucp' || path.startsWith('/ucp/profiles/'))
    return status === 200 ? [ucp('business_profile')] : [];
  if (path === '/.well-known/acp.json') return status === 200 ? ['acp.DiscoveryResponse'] : ['acp.Error'];
  if (/^\/ucp\/checkout-sessions(\/|$)/.test(path)) {
    if (status !== 200 && status !== 201) return [];
    // A checkout also against each negotiated extension's composition (the extension's fields as it defines them).
    const success = object.ucp?.status === 'success';
    const has = (capability: string) => success && Boolean(object.ucp?.capabilities?.[capability]);
    return [
      ucp('checkout_response'),
      ...(has('dev.ucp.shopping.discount') ? [ucp('checkout_with_discount')] : []),
      ...(has('dev.ucp.shopping.fulfillment') ? [ucp('checkout_with_fulfillment')] : []),
    ];
  }
  const shopping = UCP_SHOPPING_ANSWERS[path.replace(/^(\/ucp\/carts)\/[^/]+(\/cancel)?$/, '$1/{id}')];
  if (shopping) {
    if (status !== 200 && status !== 201) return [];
    // A cart also against discount.json's cart composition when it says discount is negotiated.
    const discounted =
      shopping === 'cart_response' &&
      object.ucp?.status === 'success' &&
      Boolean(object.ucp?.capabilities?.['dev.ucp.shopping.discount']);
    return [ucp(shopping), ...(discounted ? [ucp('cart_with_discount')] : [])];
  }
  if (/^\/ucp\/orders\//.test(path)) return status === 200 ? [ucp('order_response')] : [];
  if (/^\/acp(\/|$)/.test(path)) {
    if (status >= 300) return ['acp.Error'];
    if (path === '/acp/feed/products') return ['acp.feed.ProductsResponse'];
    if (/^\/acp\/carts(\/|$)/.test(path)) return ['acp.Cart'];
    return object.order ? ['acp.CheckoutSessionWithOrder'] : ['acp.CheckoutSession'];
  }
  return [];
}

/** Every problem of a body against its protocol schemas, each prefixed with the schema's name. */
export function protocolBodyProblems(
  validators: ValidatorRegistry,
  path: string,
  status: number,
  body: unknown,
): SchemaProblem[] {
  return protocolSchemasFor(path, status, body).flatMap((name) =>
    protocolSchemaProblems(validators, name, body).map((problem) => ({ ...problem, path: `${name} ${problem.path}` })),
  );
}
