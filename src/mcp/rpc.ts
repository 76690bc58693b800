// The MCP methods of a tools-only server, stateless: one JSON-RPC message in, at most one response out. A server is
// built once per process from its tool definitions (input schemas compiled, tools/list and initialize results
// serialized once); nothing of a request outlives it, so requests cannot see each other's data.
import type { Logger } from '../log.js';
import type { Tool } from './tools.js';

/** The revision these servers implement; initialize requests for any version we do not speak are answered with it. */
export const NEGOTIATED_PROTOCOL_VERSION = '2025-06-18';

// JSON-RPC 2.0 error codes.
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

export type JsonRpcId = string | number;

export interface McpServerDefinition {
  name: string;
  title: string;
  version: string;
  /** What the server is for and how its tools fit together, for the agent. */
  instructions: string;
  tools: Tool[];
}

/** What one message asks of the server: an answer (a JSON text), or nothing (a notification or a response). */
export type Answer = { kind: 'response'; json: string } | { kind: 'accepted' } | { kind: 'invalid' };

export interface McpServer {
  /** `log` is asked for only when something must be logged: most requests log nothing but their one line. */
  answer(message: object, log: () => Logger): Promise<Answer>;
  /**
   * The response to a tools/call of a tool whose result the read cache holds for these arguments, as the parts of its
   * JSON to send one after another (the result's UTF-8 bytes among them, never copied); for any other message,
   * undefined (then `answer` must be asked). Present when a tool is cached.
   */
  cachedAnswer?(message: object): ReadonlyArray<Buffer | string> | undefined;
}

interface Request {
  id: JsonRpcId;
  method: string;
  params: Record<string, unknown>;
}

const isId = (id: unknown): id is JsonRpcId => typeof id === 'string' || Number.isInteger(id);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A request, `accepted` for a notification or a client's response, or `invalid` for anything else. */
function classify(message: Record<string, unknown>): Request | 'accepted' | 'invalid' {
  if (message.jsonrpc !== '2.0') return 'invalid';
  if (typeof message.method === 'string') {
    if (message.params !== undefined && !isObject(message.params)) return 'invalid';
    if (!('id' in message)) return 'accepted';
    if (!isId(message.id)) return 'invalid';
    return { id: message.id, method: message.method, params: message.params ?? {} };
  }
  const isResponse = isId(message.id) && ('result' in message ? !('error' in message) : isObject(message.error));
  return isResponse ? 'accepted' : 'invalid';
}

/** A response up to its result, which follows it, then `}`. */
function responseHead(id: JsonRpcId): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
}

function responseJson(id: JsonRpcId, resultJson: string): string {
  return `${responseHead(id)}${resultJson}}`;
}

const CLOSING_BRACE = Buffer.from('}');

/**
 * responseJson's parts, from a result already encoded: the result is sent as it is, never decoded, encoded or copied
 * again (joined into one buffer it was a 4 kB allocation and copy per cached call).
 */
function responseParts(id: JsonRpcId, result: Buffer): ReadonlyArray<Buffer | string> {
  return [responseHead(id), result, CLOSING_BRACE];
}

function response(id: JsonRpcId, resultJson: string): Answer {
  return { kind: 'response', json: responseJson(id, resultJson) };
}

function error(id: JsonRpcId, code: number, message: string): Answer {
  return { kind: 'response', json: JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) };
}

export function createMcpServer(definition: McpServerDefinition): McpServer {
  const { name, title, version, instructions, tools } = definition;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const initializeJson = JSON.stringify({
    protocolVersion: NEGOTIATED_PROTOCOL_VERSION,
    // Only tools, and a fixed set of them: no listChanged notification could ever be sent.
    capabilities: { tools: {} },
    serverInfo: { name, title, version },
    instructions,
  });
  const toolsListJson = JSON.stringify({ tools: tools.map((tool) => tool.listing) });
  const toolNames = tools.map((tool) => tool.name).join(', ');

  async function callTool(request: Request, log: () => Logger): Promise<Answer> {
    const { name: toolName, arguments: args } = request.params;
    if (typeof toolName !== 'string') return error(request.id, INVALID_PARAMS, 'Invalid params: name is required.');
    if (args !== undefined && !isObject(args))
      return error(request.id, INVALID_PARAMS, 'Invalid params: arguments must be an object.');
    const tool = byName.get(toolName);
    const result = tool
      ? await tool.call(args, log)
      : JSON.stringify({
          isError: true,
          content: [{ type: 'text', text: `Unknown tool ${toolName}; this server's tools are ${toolNames}.` }],
        });
    return response(request.id, result);
  }

  /** What callTool would answer, when it is a cached result: the same checks, then a lookup that never runs a tool. */
  function cachedAnswer(message: object): ReadonlyArray<Buffer | string> | undefined {
    const request = classify(message as Record<string, unknown>);
    if (typeof request !== 'object' || request.method !== 'tools/call') return undefined;
    const { name: toolName, arguments: args } = request.params;
    const tool = typeof toolName === 'string' ? byName.get(toolName) : undefined;
    if (!tool?.cached || (args !== undefined && !isObject(args))) return undefined;
    const result = tool.cached(args);
    return result === undefined ? undefined : responseParts(request.id, result);
  }

  return {
    ...(tools.some((tool) => tool.cached) && { cachedAnswer }),
    async answer(message, log) {
      const request = classify(message as Record<string, unknown>);
      if (request === 'accepted' || request === 'invalid') return { kind: request };
      switch (request.method) {
        case 'initialize':
          // Whatever version the client asks for, this is the one it gets; it decides whether it can speak it.
          if (typeof request.params.protocolVersion !== 'string')
            return error(request.id, INVALID_PARAMS, 'Invalid params: protocolVersion is required.');
          return response(request.id, initializeJson);
        case 'ping':
          return response(request.id, '{}');
        case 'tools/list':
          return response(request.id, toolsListJson);
        case 'tools/call':
          return callTool(request, log);
        default:
          return error(request.id, METHOD_NOT_FOUND, `Method not found: ${request.method}.`);
      }
    },
  };
}
