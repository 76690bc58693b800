// Command-line values shared by the bench scripts.

/** A positive number option, or the fallback when it is absent; anything else stops the script before it measures. */
export function positiveNumber(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return value;
}
