// Services say where to go next in domain terms (DomainError.next), never by route: MCP clients read their messages.
// The REST surfaces name the route when they render the error, in the texts the contract documents.
import { describe, expect, it } from 'vitest';
import { BadRequest, Conflict, NotFound } from '../../src/domain/errors.js';
import { renderError } from '../../src/http/errors.js';
import { requireRegion } from '../../src/services/catalog.js';

const ROUTE = /\b(GET|POST|PATCH|DELETE|PUT) \//;

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('nothing thrown');
}

describe('next steps', () => {
  it('an unknown region names no route in the service, and REST names GET /api/store/regions', () => {
    const error = thrown(() => requireRegion(undefined, 'reg_nope')) as BadRequest;
    expect(`${error.message} ${error.resolution ?? ''}`).not.toMatch(ROUTE);
    expect(error.next).toEqual({ to: 'list_regions' });
    expect(renderError(error, 'read').body).toMatchObject({
      error: {
        code: 'invalid_parameter',
        message: 'Unknown region "reg_nope".',
        resolution:
          'Use an id from GET /api/store/regions, or omit region_id for the default region (United States, USD).',
      },
    });
    expect(renderError(error, 'checkout').body).toMatchObject({
      message:
        'Unknown region "reg_nope". Use an id from GET /api/store/regions, or omit region_id for the default region (United States, USD).',
    });
    expect(JSON.stringify(renderError(error, 'mcp').body)).not.toMatch(ROUTE);
  });

  it('a clause continues the sentence in REST, and a step may carry what it names', () => {
    const missing = new NotFound('No cart cart_1 belongs to this client.', {
      param: 'id',
      next: { to: 'create_cart' },
    });
    expect(renderError(missing, 'oauth').body).toMatchObject({
      error_description: 'No cart cart_1 belongs to this client; create one with POST /agent/carts.',
    });
    const unavailable = new Conflict(
      'line_item_unavailable',
      'Only 3 of variant_a are available; requested 5.',
      undefined,
      {
        next: { to: 'change_cart_line', lineId: 'cali_1' },
      },
    );
    expect(renderError(unavailable, 'oauth').body).toMatchObject({
      error_description:
        'Only 3 of variant_a are available; requested 5. Change or remove line cali_1 (PATCH or DELETE /agent/carts/{id}/line-items/{line_id}), then retry.',
    });
    expect(JSON.stringify(renderError(missing, 'mcp').body)).not.toMatch(ROUTE);
  });
});
