// An operation the contract documents but has no handler for (a protocol binding that is off, or one MCP answers) is
// not a route of the contract's own: the one router then answers its path 404, or 405 naming only the methods that
// are served (test/http-behaviour.test.ts), never a 401 or 400 of that operation.
import { describe, expect, it } from 'vitest';
import type { Document } from 'openapi-backend';
import { createContract, type OperationHandlers } from '../../src/http/openapi.js';
import { createValidatorRegistry } from '../../src/validators.js';

const responses = { '200': { description: 'ok' } };
const document = {
  openapi: '3.1.0',
  info: { title: 'dispatch', version: '1' },
  components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  paths: {
    '/things': {
      get: { operationId: 'listThings', security: [], responses },
      post: { operationId: 'createThing', security: [{ bearer: [] }], responses },
    },
    '/others': { post: { operationId: 'createOther', security: [{ bearer: [] }], responses } },
  },
} as Document;
const handlers = { listThings: () => ({ status: 200, body: [] }) } as unknown as OperationHandlers;

describe('operations without a handler', () => {
  it('are not among the contract routes', async () => {
    const contract = await createContract({ document, handlers, validators: createValidatorRegistry() });
    expect(contract.routes.map(({ operation }) => operation.operationId)).toEqual(['listThings']);
  });
});
