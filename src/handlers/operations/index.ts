// Health, readiness and the published contract.
import { readFileSync } from 'node:fs';
import type { Deps } from '../../deps.js';
import type { WebDeps } from '../../http/web-deps.js';
import { representationOf, sendRepresentation } from '../../http/caching.js';
import type { OperationHandlers } from '../../http/openapi.js';
import { projectPath } from '../../paths.js';
import { publishedDocument } from './published.js';

type OperationsHandlers = Pick<
  OperationHandlers,
  'getHealth' | 'getReadiness' | 'getOpenApiDocument' | 'getApiReference' | 'getFavicon'
>;

const READINESS_TIMEOUT_MS = 2_000;
/** When a balancer (or a client) should ask again after a 503. */
const NOT_READY_RETRY_AFTER_SECONDS = '5';

/** The HTML reference, with the configured public addresses where the document has its server variables. */
function loadReference(config: Deps['config']): string {
  try {
    return readFileSync(projectPath('dist', 'docs.html'), 'utf8')
      .replaceAll('{base_url}', config.baseUrl)
      .replaceAll('{agent_base_url}', config.agentBaseUrl);
  } catch {
    return '<!doctype html><title>API reference</title><p>The HTML reference is built by <code>npm run build:docs</code>. The contract is at <a href="/openapi.json">/openapi.json</a>.</p>';
  }
}

async function databaseAnswers(deps: Deps): Promise<boolean> {
  try {
    await Promise.race([
      deps.db.raw('select 1'),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('readiness probe timed out')), READINESS_TIMEOUT_MS).unref(),
      ),
    ]);
    return true;
  } catch {
    return false;
  }
}

export function operationsHandlers(deps: WebDeps): OperationsHandlers {
  // Built once: each is megabytes (or binary) and never changes while the process runs.
  const document = representationOf(publishedDocument(deps.config));
  const reference = representationOf(loadReference(deps.config), 'text/html; charset=utf-8');
  const favicon = representationOf(readFileSync(projectPath('assets', 'favicon.ico')), 'image/x-icon');
  return {
    getHealth(_input, ctx) {
      ctx.body = { status: 'ok' };
    },
    async getReadiness(_input, ctx) {
      const up = await databaseAnswers(deps);
      // A draining instance (SIGTERM) reports not ready at once, so the balancer stops routing to it during the drain.
      const { draining } = deps.lifecycle;
      ctx.status = up && !draining ? 200 : 503;
      if (ctx.status === 503) ctx.set('Retry-After', NOT_READY_RETRY_AFTER_SECONDS);
      ctx.body = { status: draining ? 'draining' : up ? 'ready' : 'unavailable', database: up ? 'up' : 'down' };
    },
    getOpenApiDocument(_input, ctx) {
      sendRepresentation(ctx, document);
    },
    getApiReference(_input, ctx) {
      ctx.set(
        'Content-Security-Policy',
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; font-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      sendRepresentation(ctx, reference);
    },
    getFavicon(_input, ctx) {
      sendRepresentation(ctx, favicon);
    },
  };
}
