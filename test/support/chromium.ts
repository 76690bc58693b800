// Where the browser tests find Chromium (Debian's `chromium`; `.ci/run` installs it), and why they are skipped when it
// is not there. Kept apart from the launcher so the global setup can say so without loading a test's hooks.
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
