// Headless Chromium for the browser tests: Debian's `chromium` driven by playwright-core, with a fresh profile and
// none of the browser's own background traffic (updates, sync, safe-browsing lists), so every request a page makes is
// the page's own. Without Chromium the browser tests are skipped, saying why (test/support/chromium.ts).
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM, chromiumMissing } from './chromium.js';
import { removeFolder, temporaryFolder } from './cleanup.js';

/** A browser test's name, saying why it was skipped when it is. */
export function browserTest(name: string): string {
  return chromiumMissing ? `${name} [skipped: ${chromiumMissing}]` : name;
}

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  const profile = temporaryFolder('chromium-profile-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
  });
  return {
    context,
    async close() {
      await context.close();
      removeFolder(profile);
    },
  };
}
