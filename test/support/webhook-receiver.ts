// A local server that receives order webhooks as an agent would, checks their signature, and can refuse the first
// deliveries to exercise retries.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the test services run with (test/support/service.ts, process.ts): webhook receivers and platform-profile
 * servers listen on 127.0.0.1, which the egress guard refuses unless the operator names it (tests of the guard set
 * EGRESS_ALLOWED_HOSTS to '', none); and tests name many profiles from one address, so its profile-fetch budget is as
 * loose as their request limit (the budget is tested on its own).
 */
export const LOOPBACK_EGRESS_ENV = { EGRESS_ALLOWED_HOSTS: '127.0.0.1', UCP_PROFILE_FETCHES_PER_MINUTE: '100000' };

export interface ReceivedEvent {
  id: string;
  type: string;
  body: any;
  /** The body's exact bytes, as text (what a signature or a digest covers). */
  raw: string;
  signatureValid: boolean;
  headers: Record<string, string | string[] | undefined>;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedEvent[];
  /** How many more deliveries to answer 500 before accepting. */
  refuseNext: number;
  /** The secret to check signatures with (set once the client is registered). */
  secret: string;
  /** Resolves once `count` events have been accepted (generous limit: the machine may be loaded). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedEvent[]>;
  close(): Promise<void>;
}

/** Verifies `t=…,v1=…` as an agent would: HMAC-SHA256 over "<t>.<raw body>". */
export function verifySignature(header: string, body: string, secret: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    refuseNext: 0,
    secret: '',
    async waitFor(count, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < count && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      return receiver.received;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (receiver.refuseNext > 0) {
      receiver.refuseNext -= 1;
      response.writeHead(500).end();
      return;
    }
    const body = JSON.parse(raw);
    receiver.received.push({
      id: body.id,
      type: body.type,
      body,
      raw,
      headers: request.headers,
      signatureValid: verifySignature(String(request.headers['webhook-signature'] ?? ''), raw, receiver.secret),
    });
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
