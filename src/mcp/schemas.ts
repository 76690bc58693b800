// The MCP tools' schemas. Where a REST body or response already says what a value is, the tool uses that very
// definition: the contract's component schema, converted to zod. An MCP answer and a REST answer are then checked by
// one definition and cannot drift apart; stray keys are rejected (the components forbid additional properties).
import { z } from 'zod';
import type { components } from '../../codegen/types.js';
import { loadDocument } from '../document.js';

type Schemas = components['schemas'];
type SchemaName = keyof Schemas;

/** An object schema whose parsed value has the contract's type. */
export type ContractSchema<Name extends SchemaName> = z.ZodObject & z.ZodType<Schemas[Name]>;

let definitions: Record<string, unknown> | undefined;

/** The bundled document's components as JSON Schema `$defs`, so each `$ref` resolves inside one schema. */
function contractDefinitions(): Record<string, unknown> {
  if (!definitions) {
    const { components: bundled } = loadDocument() as { components: { schemas: Record<string, unknown> } };
    definitions = JSON.parse(JSON.stringify(bundled.schemas).replaceAll('"#/components/schemas/', '"#/$defs/')) as Record<string, unknown>;
  }
  return definitions;
}

const converted = new Map<SchemaName, z.ZodType>();

/** The contract's component `name` as a zod object schema; converted once per process (zod schemas are immutable). */
export function contractSchema<Name extends SchemaName>(name: Name): ContractSchema<Name> {
  let schema = converted.get(name);
  if (!schema) {
    const defs = contractDefinitions();
    const component = defs[name];
    if (!component) throw new Error(`The contract has no schema component ${name}; run npm run codegen`);
    const jsonSchema = { $schema: 'https://json-schema.org/draft/2020-12/schema', ...(component as object), $defs: defs };
    schema = z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
    // The SDK only lists (and validates against) object schemas; anything else would silently lose its outputSchema.
    if (!(schema instanceof z.ZodObject)) throw new Error(`Schema component ${name} is not an object schema`);
    converted.set(name, schema);
  }
  return schema as ContractSchema<Name>;
}
