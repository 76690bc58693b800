// Order-webhook deliveries are isolated per endpoint (issue #29, Low finding: one hanging endpoint delayed every other
// client's deliveries, 60 orders → 16 s). An endpoint that never answers holds at most DELIVERIES_PER_ENDPOINT of its
// own deliveries; another client's deliveries go out meanwhile. Asserted on counts and order, not on durations: the
// delivery timeout is set long enough that the hanging requests are all still open when the other client's arrive.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERIES_PER_ENDPOINT, enqueueOrderEvent } from '../src/services/order-webhooks.js';
import { registerClient } from './support/agent.js';
import { startTestService, type TestService } from './support/service.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/** An endpoint that reads each request and never answers; it counts what it received and what is still open. */
interface HangingEndpoint {
  url: string;
  received: number;
  open: number;
  close(): Promise<void>;
}

async function startHangingEndpoint(): Promise<HangingEndpoint> {
  const held = new Set<IncomingMessage>();
  const endpoint: HangingEndpoint = { url: '', received: 0, open: 0, close: async () => {} };
  const server: Server = createServer((request) => {
    endpoint.received += 1;
    endpoint.open += 1;
    held.add(request);
    request.resume();
    request.socket.on('close', () => {
      endpoint.open -= 1;
      held.delete(request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  endpoint.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return endpoint;
}

describe('an endpoint that hangs', () => {
  let api: TestService;
  let hanging: HangingEndpoint;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    [hanging, receiver] = await Promise.all([startHangingEndpoint(), startWebhookReceiver()]);
    // Deliveries to the hanging endpoint stay open for a minute: long past what the other client's deliveries need.
    api = await startTestService({ env: { WEBHOOK_TIMEOUT_MS: '60000' } });
  });
  afterAll(async () => {
    // Closing the endpoint first ends its deliveries, which the service's close waits for.
    await hanging?.close();
    await api?.close();
    await receiver?.close();
  });

  it("holds only its own deliveries: another client's arrive while its own are still open", async () => {
    const { deps } = api.service;
    const slow = (await registerClient(api, { scope: 'orders:read', webhook_url: hanging.url })) as any;
    const prompt = (await registerClient(api, { scope: 'orders:read', webhook_url: receiver.url })) as any;
    receiver.secret = prompt.webhook_secret;
    // More than a poll's batch of the hanging client's events, the oldest due; the other client's once it is hanging.
    for (let index = 0; index < 24; index++)
      await enqueueOrderEvent(deps.db, deps, slow.client_id, 'order.created', { id: `order_slow_${index}` });
    const deadline = Date.now() + 60_000;
    while (hanging.received === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const PROMPT = 6;
    for (let index = 0; index < PROMPT; index++)
      await enqueueOrderEvent(deps.db, deps, prompt.client_id, 'order.created', { id: `order_prompt_${index}` });

    const arrived = await receiver.waitFor(PROMPT);
    expect(arrived.map((event) => event.body.data.order.id).sort()).toEqual(
      Array.from({ length: PROMPT }, (_, index) => `order_prompt_${index}`).sort(),
    );
    expect(arrived.every((event) => event.signatureValid)).toBe(true);
    // Meanwhile the hanging endpoint was sent at most its share, none of which has ended.
    expect(hanging.received).toBeLessThanOrEqual(DELIVERIES_PER_ENDPOINT);
    expect(hanging.open).toBe(hanging.received);
    const pending = await deps.db('webhook_deliveries').where({ client_id: slow.client_id }).whereNull('delivered_at');
    expect(pending).toHaveLength(24);
  });
});
