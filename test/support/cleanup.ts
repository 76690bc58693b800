// What a test file starts outside its own process (service children) or on disk (data folders) is registered here and
// removed after the file has run, whether its tests passed, failed or timed out; and, should the worker itself be
// stopped, when it exits. Listed in vitest's setupFiles, so the hook exists in every file.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const children = new Set<ChildProcess>();
const folders = new Set<string>();

export function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** A new temporary folder, removed after the file. */
export function temporaryFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.add(dir);
  return dir;
}

export function removeFolder(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  folders.delete(dir);
}

async function removeLeftovers(): Promise<void> {
  // A child still running here belongs to a test that failed before stopping it: no draining, just gone.
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  for (const dir of folders) removeFolder(dir);
}

afterAll(removeLeftovers);
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});
