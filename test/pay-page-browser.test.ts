// The pay page in a real browser (headless Chromium through playwright-core): a buyer sees the cart, presses the test
// button, and lands on the receipt. The browser sends the page's cookie, Origin and Sec-Fetch-Site itself, so this is
// also the cross-site protection seen from the buyer's side. Screenshots: PAY_SCREENSHOTS=<dir> keeps them.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTest, launchChromium, type TestBrowser } from './support/browser.js';
import { chromiumMissing } from './support/chromium.js';
import { startTestService, type TestService } from './support/service.js';

const screenshots = process.env.PAY_SCREENSHOTS;

describe.skipIf(chromiumMissing)(browserTest('the pay page in a browser'), () => {
  let api: TestService;
  let browser: TestBrowser;
  beforeAll(async () => {
    api = await startTestService();
    browser = await launchChromium();
    if (screenshots) mkdirSync(screenshots, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('shows the cart, takes a test payment from its button, then shows the receipt', async () => {
    const created = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        items: [{ id: 'variant_01tongue2pack', quantity: 2 }, { id: 'variant_01tonguetravel' }],
        promo_codes: ['10OFF'],
        buyer: { email: 'ada@example.com' },
      }),
    });
    const session = (await created.json()) as any;
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 720, height: 900 });
    await page.goto(`${api.url}/pay/${session.id}`);
    const button = page.getByRole('button', { name: /test mode, no money moves/ });
    expect(await button.textContent()).toContain(`$${session.totals.total.amount.toFixed(2)}`);
    if (screenshots) await page.screenshot({ path: join(screenshots, 'pay-page-before.png'), fullPage: true });

    await button.click();
    await page.waitForURL(`${api.url}/pay/${session.id}`);
    await page.getByText('your order is confirmed').waitFor();
    const paid = (await (await api.http(`/checkout_sessions/${session.id}`)).json()) as any;
    expect(paid.status).toBe('completed');
    expect(await page.textContent('h1')).toBe(`Order ${paid.order.order_number}`);
    expect(await page.locator('form').count()).toBe(0);
    if (screenshots) await page.screenshot({ path: join(screenshots, 'pay-page-after.png'), fullPage: true });

    await page.goto(paid.order.permalink_url.replace(/^https?:\/\/[^/]+/, api.url));
    expect(await page.textContent('h1')).toBe(`Order ${paid.order.order_number}`);
    await page.close();
  }, 120_000);
});
