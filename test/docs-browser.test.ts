// The API reference in a real browser (headless Chromium): /docs is self-contained, so a reader's visit asks nothing
// of any other host (no telemetry, no CDN logo) and logs no console error (our own CSP would report any blocked
// request), and a sidebar link opened on its own lands on the reference, not on the API's JSON 404.
import type { ConsoleMessage, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserTest, launchChromium, type TestBrowser } from './support/browser.js';
import { chromiumMissing } from './support/chromium.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let browser: TestBrowser;
beforeAll(async () => {
  api = await startTestService();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** Requests a page may make without leaving the service: its own origin, and data the page holds itself. */
function isLocal(url: string): boolean {
  const { protocol, origin } = new URL(url);
  return protocol === 'data:' || protocol === 'blob:' || origin === new URL(api.url).origin;
}

it.skipIf(chromiumMissing)(
  browserTest('loads /docs with no request leaving the service and no console error'),
  async () => {
    const requests: string[] = [];
    const problems: string[] = [];
    const recordRequest = (request: Request) => requests.push(request.url());
    browser.context.on('request', recordRequest);
    const page = await browser.context.newPage();
    page.on('console', (message: ConsoleMessage) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));

    const response = await page.goto(`${api.url}/docs`);
    expect(response?.status()).toBe(200);
    const money = page.locator('a', { hasText: 'Money' }).first();
    await money.waitFor();
    // A reader's visit: navigate in the page, let it settle, then switch to another tab. The page turning hidden is
    // when batched telemetry is flushed; a request made after it answers for everything before it having been seen.
    await money.click();
    await page.waitForLoadState('networkidle');
    await page.evaluate(`
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    `);
    await Promise.all([page.waitForRequest(`${api.url}/healthz`), page.evaluate(() => fetch('/healthz'))]);
    await page.close();
    browser.context.off('request', recordRequest);

    expect(requests).toContain(`${api.url}/docs`);
    expect(requests.filter((url) => !isLocal(url))).toEqual([]);
    expect(problems).toEqual([]);
  },
);

it.skipIf(chromiumMissing)(browserTest('opens a sidebar link on its own as the reference'), async () => {
  const page = await browser.context.newPage();
  await page.goto(`${api.url}/docs`);
  const href = await page.locator('a', { hasText: 'Money' }).first().getAttribute('href');
  const target = new URL(href!, page.url());
  expect(target.pathname).toBe('/docs');
  await page.close();

  const opened = await browser.context.newPage();
  const response = await opened.goto(target.href);
  expect(response?.status()).toBe(200);
  expect(response?.headers()['content-type']).toMatch(/^text\/html/);
  // The reference renders and scrolls to the linked section.
  const heading = opened.locator('h2', { hasText: /^Money$/ });
  await expect
    .poll(async () => (await heading.boundingBox())?.y, { timeout: 15_000 })
    .toBeLessThan((opened.viewportSize()?.height ?? 720) / 2);
  await opened.close();
});
