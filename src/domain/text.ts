// Strings PostgreSQL cannot store: text and jsonb refuse U+0000, and jsonb refuses an unpaired UTF-16 surrogate
// (JSON escapes such as "\ud800" parse into one). A request holding either must be refused with a clear error
// before any query is built from it; found by the hostile-input tests as 500s.
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u; // with the u flag, the range matches only unpaired surrogates

export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);
}

/** The path (keys and indexes) of the first string or object key in `value` that cannot be stored, if any. */
export function unstorableTextAt(
  value: unknown,
  path: Array<string | number> = [],
): Array<string | number> | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorableTextAt(item, [...path, index]);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (!isStorableText(key)) return [...path, key];
      const found = unstorableTextAt(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}
