// The processor's webhook is authenticated by its signature, so it does not share the anonymous per-address budget
// (Stripe sends from a few addresses, which a shared budget throttles at peak); what an address may send unsigned or
// forged is bounded by a budget of refusals of its own, spent before any body is read or verified (issue #29).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';
import { signedDelivery, startFakeStripe, stripeEvent, type FakeStripe } from './support/stripe.js';

const ANONYMOUS_LIMIT = 3;
const REFUSALS = 2;

let api: TestService;
let stripe: FakeStripe;
beforeAll(async () => {
  stripe = await startFakeStripe();
  api = await startTestService({
    env: {
      BASE_URL: 'https://store.example',
      ...stripe.env,
      TRUST_PROXY: '1',
      RATE_LIMIT_PER_MINUTE: String(ANONYMOUS_LIMIT),
      WEBHOOK_REFUSALS_PER_MINUTE: String(REFUSALS),
    },
  });
});
afterAll(async () => {
  await api?.close();
  await stripe?.close();
});

let addresses = 0;
const newAddress = () => `203.0.113.${++addresses}`;

/** A delivery from `address`: its status and the headers a client reads. */
async function deliver(address: string, init: RequestInit) {
  const response = await api.http('/webhooks/stripe', {
    ...init,
    headers: { ...(init.headers as Record<string, string>), 'X-Forwarded-For': address },
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    remaining: response.headers.get('ratelimit-remaining'),
  };
}

const signed = () => signedDelivery(stripeEvent('customer.created', { id: 'cus_test', object: 'customer' }));
const forged = () =>
  signedDelivery(stripeEvent('customer.created', { id: 'cus_test', object: 'customer' }), { secret: 'whsec_forged' });

describe('/webhooks/stripe and the rate limits', () => {
  it('accepts every signed event from one address, past the anonymous budget, and counts none', async () => {
    const address = newAddress();
    const answers = [];
    for (let sent = 0; sent < ANONYMOUS_LIMIT * 3; sent++) answers.push(await deliver(address, signed()));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    expect(answers.map((answer) => answer.remaining)).toEqual(answers.map(() => String(REFUSALS)));
    // The address's anonymous budget is untouched by them.
    const read = await api.http('/api/store/regions', { headers: { 'X-Forwarded-For': address } });
    expect(read.headers.get('ratelimit-remaining')).toBe(String(ANONYMOUS_LIMIT - 1));
  });

  it('refuses forged events, then refuses the address with 429 and Retry-After before reading what it sends', async () => {
    const address = newAddress();
    const answers = [];
    for (let sent = 0; sent < REFUSALS + 3; sent++) answers.push(await deliver(address, forged()));
    expect(answers.map((answer) => answer.status)).toEqual([400, 400, 429, 429, 429]);
    expect(answers.slice(REFUSALS).every((answer) => Number(answer.retryAfter) >= 1)).toBe(true);
    // Unsigned and malformed requests are refusals too: an address that spent its budget is refused whatever it sends.
    expect((await deliver(address, { method: 'POST', body: 'x'.repeat(1000) })).status).toBe(429);
    expect((await deliver(address, signed())).status).toBe(429);
    // Other addresses (the processor's) keep theirs, and forged requests leave the anonymous budget alone.
    expect((await deliver(newAddress(), signed())).status).toBe(200);
    const read = await api.http('/api/store/regions', { headers: { 'X-Forwarded-For': address } });
    expect(read.headers.get('ratelimit-remaining')).toBe(String(ANONYMOUS_LIMIT - 1));
  });

  it('counts an unsigned body as a refusal', async () => {
    const address = newAddress();
    const unsigned = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"id":"evt_x"}' };
    expect([(await deliver(address, unsigned)).status, (await deliver(address, unsigned)).status]).toEqual([400, 400]);
    expect((await deliver(address, unsigned)).status).toBe(429);
  });
});
