// UCP's order capability (`dev.ucp.shopping.order`): advertised in the business profile with the key that signs order
// events, and `GET /ucp/orders/{id}` for a platform reading an order its own UCP checkout created (any other order,
// or an unknown id, is `not_found`: a platform learns nothing of orders it did not create). The events themselves are
// written by src/services/order-events.ts.
import type { Deps } from '../../deps.js';
import { toUcpOrder, UCP_ORDER } from '../../domain/order-events.js';
import { ucpErrorResponse, ucpMessage, type UcpMessage, type UcpVersion } from '../../domain/ucp-checkout.js';
import { jsonResponse } from '../../http/protocol-io.js';
import type { ProtocolResponse } from '../../protocols/answers.js';
import { orderFacts, originOfSession } from '../../services/order-events.js';
import type { Negotiated } from '../../services/ucp-profiles.js';

/** The order capability's entry in a business profile of `version`. */
export function orderCapability(version: UcpVersion) {
  return {
    [UCP_ORDER]: [
      {
        version,
        spec: `https://ucp.dev/${version}/specification/order`,
        schema: `https://ucp.dev/${version}/schemas/shopping/order.json`,
      },
    ],
  };
}

/**
 * The public key order events are signed with, where each version's verifiers read it: `signing_keys` (2026-04-08),
 * `keys` (2026-08-25); nothing when the service signs nothing (no AGENT_WEBHOOK_KEY).
 */
export function publishedKeys(deps: Pick<Deps, 'ucpSigningKey'>, version: UcpVersion) {
  const key = deps.ucpSigningKey;
  if (!key) return {};
  return version === '2026-04-08' ? { signing_keys: [key.publicJwk] } : { keys: [key.publicJwk] };
}

export type OrderNegotiation = (
  profileUrl: string,
  address: string,
) => Promise<{ negotiated: Negotiated; notes: UcpMessage[] } | ProtocolResponse>;

function errorAnswer(deps: Deps, version: UcpVersion, code: string, content: string, empty = false) {
  const message = ucpMessage({ type: 'error', code, severity: 'unrecoverable', content });
  return jsonResponse(200, ucpErrorResponse([message], deps.config.baseUrl, version, { emptyCapabilities: empty }));
}

/** Reads an order for the platform whose profile is `profileUrl`, in the version it negotiates. */
export function createUcpOrderReader(deps: Deps, negotiate: OrderNegotiation) {
  return async ({ profileUrl, address, id }: { profileUrl: string; address: string; id: string }) => {
    const negotiation = await negotiate(profileUrl, address);
    if ('status' in negotiation) return negotiation;
    const { version, order } = negotiation.negotiated;
    // `order` is undefined only when the lenient policy proceeded without the profile: as if it declared everything.
    if (order === false)
      return errorAnswer(
        deps,
        version,
        'capabilities_incompatible',
        `Declare ${UCP_ORDER} ${version} in the platform profile to read orders.`,
        true,
      );
    const facts = await orderFacts(deps.db, deps, id);
    const origin = facts && (await originOfSession(deps.db, facts.sessionId));
    if (!facts || origin?.protocol !== 'ucp' || origin.profile !== profileUrl)
      return errorAnswer(deps, version, 'not_found', `No order with id ${id} from this platform's checkouts.`);
    return jsonResponse(200, toUcpOrder(facts, version));
  };
}
