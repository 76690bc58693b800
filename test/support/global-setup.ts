// Runs once before the suite: says which storage path this run exercises, so a CI log shows both.
export default function setup(): void {
  const storage = process.env.DATABASE_URL?.trim() ? `PostgreSQL (${new URL(process.env.DATABASE_URL).host})` : 'embedded PGlite';
  process.stdout.write(`\nStorage under test: ${storage}\n`);
}
