// The MCP tools' schemas, as JSON Schema straight from the contract. Where a REST body, parameter or response already
// says what a value is, the tool uses that very definition (a component schema, or a parameter's schema with its
// pattern, lengths and range), made self-contained: the components it refers to travel along as `$defs`. An MCP
// answer and a REST answer are then checked by one definition and cannot drift apart; stray keys are rejected (the
// components forbid additional properties). Arguments are validated by the process's validators (src/validators.ts).
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { components } from '../../codegen/types.js';
import type { Document } from 'openapi-backend';
import { firstProblem } from '../http/validation-errors.js';
import type { ValidatorRegistry } from '../validators.js';
import { jsonPath } from '../domain/protocol-session.js';
import { unstorableTextAt } from '../domain/text.js';
import { firstSchemaError, schemaByRef } from '../protocols/schemas.js';

type Schemas = components['schemas'];
type SchemaName = keyof Schemas;
type ParameterName = keyof components['parameters'];

/** A JSON Schema object; `T` is the type of the values it accepts (for the compiler only). */
export type JsonSchema<T = unknown> = Record<string, unknown> & { readonly __accepts?: T };

/** An object schema, as MCP requires for tool inputs and outputs. */
export type ObjectSchema<T = unknown> = JsonSchema<T> & {
  type: 'object';
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

const COMPONENT_REF = '#/components/schemas/';

interface Bundled {
  components: { schemas: Record<string, JsonSchema>; parameters: Record<string, { schema?: JsonSchema }> };
}

/** The contract's components as self-contained tool schemas, read from the contract the process serves. */
export interface ContractSchemas {
  /** The contract's component `name`, self-contained; it must be an object schema (MCP lists only those). */
  schema<Name extends SchemaName>(name: Name): ObjectSchema<Schemas[Name]>;
  /**
   * The schema of the contract's parameter component `name` (its pattern, lengths and range, default), so a tool
   * argument accepts exactly what the REST parameter accepts; the description, written for the tool, is the caller's.
   */
  parameter<Name extends ParameterName>(name: Name, description: string): JsonSchema<components['parameters'][Name]>;
}

/** `node` with its component references pointing at `#/$defs/…`, and the names of the components it refers to. */
function rewriteRefs(node: unknown, found: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, found));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(COMPONENT_REF)) {
        const name = value.slice(COMPONENT_REF.length);
        found.add(name);
        return [key, `#/$defs/${name}`];
      }
      return [key, rewriteRefs(value, found)];
    }),
  );
}

export function contractSchemas(document: Document): ContractSchemas {
  const contract = document as unknown as Bundled;

  /** `schema` with every component it refers to, directly or not, as `$defs`: one schema any validator can compile. */
  function selfContained<T extends JsonSchema>(schema: JsonSchema): T {
    const found = new Set<string>();
    const root = rewriteRefs(schema, found) as JsonSchema;
    const defs: Record<string, unknown> = {};
    for (const name of found) {
      // `found` grows while it is walked, so components referred to by components are collected too.
      const component = contract.components.schemas[name];
      if (!component) throw new Error(`The contract has no schema component ${name}; run npm run codegen`);
      defs[name] = rewriteRefs(component, found);
    }
    return (found.size ? { ...root, $defs: defs } : root) as T;
  }

  return {
    schema(name) {
      const component = contract.components.schemas[name];
      if (component?.type !== 'object') throw new Error(`The contract has no object schema component ${name}`);
      return selfContained(component);
    },
    parameter(name, description) {
      const schema = contract.components.parameters[name]?.schema;
      if (!schema) throw new Error(`The contract has no parameter component ${name}; run npm run codegen`);
      return { ...selfContained(schema), description };
    },
  };
}

/** A tool's arguments as checked: the value, typed, or the first problem naming the argument (`items[0].quantity`). */
export type Checked<T> = { ok: true; value: T } | { ok: false; param: string; message: string };

/**
 * Compiles `schema` once with the process's validators (first error only, as for any client input); the checker fills
 * top-level defaults, as the REST handlers do.
 */
export function argumentChecker<T>(
  validators: ValidatorRegistry,
  key: string,
  schema: ObjectSchema<T>,
): (args: unknown) => Checked<T> {
  const validate: ValidateFunction = validators.validator('firstError', `mcp:${key}`, schema);
  const defaults = Object.entries(schema.properties ?? {}).filter(([, property]) => 'default' in property);
  return (args) => {
    if (!validate(args)) {
      // Errors are reported at /arguments/…, so paths read like the REST ones (items[0].quantity).
      const errors = (validate.errors ?? []).map((error): ErrorObject => ({
        ...error,
        instancePath: `/arguments${error.instancePath}`,
      }));
      const { param, message } = firstProblem(errors);
      return { ok: false, param, message };
    }
    const value = { ...(args as Record<string, unknown>) };
    for (const [name, property] of defaults) value[name] ??= property.default;
    return { ok: true, value: value as T };
  };
}

/**
 * `schema` as listed to MCP clients: a `type` array (`["string", "null"]`, a nullable value) becomes `anyOf` branches
 * of one `type` each, which accept the same values. Clients that map tool schemas onto a single-`type` dialect (Gemini
 * function declarations; MCP Inspector's --strict check) take the `anyOf` form; the REST contract keeps its own.
 */
export function singleTyped<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item: unknown) => singleTyped(item)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const entries = Object.entries(schema).map(([key, value]) => [key, singleTyped(value)] as const);
  const node = Object.fromEntries(entries) as Record<string, unknown>;
  const { type } = node;
  if (!Array.isArray(type) || 'anyOf' in node) return node as T;
  const { type: _type, ...rest } = node;
  return { ...rest, anyOf: type.map((one: unknown) => ({ type: one })) } as T;
}

/**
 * The first problem of a protocol binding's tool arguments (/ucp/mcp, /acp/mcp): text the database cannot store, then
 * the schema's first error (compiled over the protocol schemas, once per `key`), as a JSONPath and a message; undefined
 * when the arguments are valid.
 */
export function protocolArgumentProblem(
  validators: ValidatorRegistry,
  key: string,
  schema: object,
  args: unknown,
): { path: string; message: string } | undefined {
  const unstorable = unstorableTextAt(args);
  if (unstorable) {
    const path = jsonPath(unstorable);
    return {
      path,
      message: `Invalid arguments: ${path} must not contain a NUL character (U+0000) or an unpaired surrogate.`,
    };
  }
  const error = firstSchemaError(schemaByRef(validators, key, schema), args ?? {});
  if (!error) return undefined;
  const segments = error.instancePath.split('/').slice(1);
  const missing =
    error.keyword === 'required' ? [String((error.params as { missingProperty: string }).missingProperty)] : [];
  const path = jsonPath([...segments, ...missing]);
  return { path, message: `Invalid arguments: ${path} ${error.message ?? 'is invalid'}.` };
}
