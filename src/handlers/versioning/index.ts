import type { Deps } from '../../deps.js';
import { API_VERSIONS, currentVersion } from '../../domain/versioning.js';
import { sendCacheable } from '../../http/caching.js';
import type { OperationHandlers } from '../../http/openapi.js';

export function versioningHandlers(deps: Deps): Pick<OperationHandlers, 'getChangelog'> {
  return {
    getChangelog(_input, ctx) {
      sendCacheable(ctx, {
        current_version: currentVersion(),
        versions: API_VERSIONS,
        deprecations: deps.deprecations.map((entry) => ({
          subject: entry.subject,
          deprecated_at: entry.deprecatedAt,
          sunset_at: entry.sunsetAt,
          description: entry.description,
        })),
      });
    },
  };
}
