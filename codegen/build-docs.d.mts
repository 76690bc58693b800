// Types of codegen/build-docs.mjs for the test setup that calls it.
export const docsSource: string;
export const docsOutput: string;
export function buildDocs(): void;
