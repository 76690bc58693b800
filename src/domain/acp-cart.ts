// A cart rendered as an ACP 2026-04-17 `Cart` (schema.cart.json): the checkout session's rendering (acp-checkout.ts)
// cut to what a cart has. Its line items, buyer and totals are the session's, as the RFC says ("same structure as
// checkout line items"): the totals are the estimate the cart's checkout session would quote. No status, payment,
// fulfillment options or continue_url (the pay page takes sessions, not carts); no hand-off message. Pure.
import { toAcpCheckoutSession, type AcpRendering } from './acp-checkout.js';
import type { ProtocolSession } from './protocol-session.js';

export function toAcpCart(session: ProtocolSession, rendering: AcpRendering) {
  const { id, buyer, currency, line_items, totals, messages } = toAcpCheckoutSession(session, rendering);
  const cartMessages = messages.filter((message) => message.param !== '$.continue_url');
  return {
    id,
    line_items,
    ...(buyer ? { buyer } : {}),
    currency,
    totals,
    ...(cartMessages.length ? { messages: cartMessages } : {}),
  };
}
