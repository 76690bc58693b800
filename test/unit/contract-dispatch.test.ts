// An operation the contract documents but this dispatcher has no handler for (a protocol binding that is off) is not
// here: its requests are a 404, or a 405 naming only the methods that are, never a 401 or 400 of that operation.
import { describe, expect, it } from 'vitest';
import type { Document } from 'openapi-backend';
import { MethodNotAllowed, UnknownEndpoint } from '../../src/domain/errors.js';
import type { AppContext } from '../../src/http/context.js';
import { createContract, dispatchContract, type OperationHandlers } from '../../src/http/openapi.js';

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

function request(method: string, path: string): AppContext {
  return { method, path, headers: {}, query: {}, state: {}, request: {}, get: () => '' } as unknown as AppContext;
}

describe('operations without a handler', () => {
  it('answer 404, not 401, on a path with no other operation', async () => {
    const dispatch = dispatchContract(await createContract({ document, handlers }));
    await expect(dispatch(request('POST', '/others'), async () => {})).rejects.toBeInstanceOf(UnknownEndpoint);
  });

  it('are not among the methods a 405 names', async () => {
    const dispatch = dispatchContract(await createContract({ document, handlers }));
    for (const method of ['POST', 'PATCH']) {
      const refusal = await dispatch(request(method, '/things'), async () => {}).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(MethodNotAllowed);
      expect((refusal as MethodNotAllowed).allowed).toEqual(['GET', 'HEAD']);
    }
  });
});
