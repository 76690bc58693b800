// The run's results, for people (one line per check, then the counts) and for CI (JSON and JUnit XML). A skip is
// never counted as a pass; the exit code is 0 only when nothing failed.
import type { Outcome } from './checks/check.js';

export interface CheckResult {
  id: string;
  title: string;
  /** `ucp`, `acp` or `discovery`, and `store` for the store-specific figures. */
  protocol: string;
  capability?: string;
  transport?: string;
  spec: string;
  outcome: Outcome;
  /** Why it failed (`expected …, got …`) or was skipped. */
  message?: string;
  durationMs: number;
}

export interface ProtocolPlan {
  protocol: 'ucp' | 'acp';
  /** The versions the merchant advertises. */
  advertised: string[];
  /** The versions this runner has schemas for. */
  known: string[];
  /** The version tested, or undefined (with the reason) when none can be. */
  tested?: string;
  reason?: string;
}

export interface Report {
  target: string;
  startedAt: string;
  plans: ProtocolPlan[];
  notes: string[];
  checks: CheckResult[];
  summary: { total: number; pass: number; fail: number; skip: number; responses: number; schemaErrors: number };
}

export function summaryLine(summary: Report['summary']): string {
  return `${summary.pass} pass / ${summary.fail} fail / ${summary.skip} skip (of ${summary.total}); ${summary.responses} responses, ${summary.schemaErrors} schema errors`;
}

export function resultLine(result: CheckResult): string {
  const where = [result.protocol, result.capability, result.transport].filter(Boolean).join(' ');
  const head = `${result.outcome.toUpperCase()} ${result.id} (${where}): ${result.title}`;
  if (result.outcome === 'pass') return head;
  // A skip says why; a failure also says where the specification fixes what was expected.
  if (result.outcome === 'skip') return `${head}\n     ${result.message ?? ''}`;
  return `${head}\n     ${result.message ?? ''}\n     spec: ${result.spec}`;
}

export function planLine(plan: ProtocolPlan): string {
  const advertised = plan.advertised.length ? plan.advertised.join(', ') : 'nothing';
  const known = plan.known.join(', ') || 'none';
  const verdict = plan.tested ? `testing ${plan.tested}` : `not tested: ${plan.reason}`;
  return `${plan.protocol.toUpperCase()}: merchant advertises ${advertised}; this runner has schemas for ${known}; ${verdict}`;
}

/** Characters XML 1.0 cannot carry (control characters other than tab and newlines). */
const xmlAllowed = (character: string) => {
  const code = character.codePointAt(0)!;
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code !== 0xfffe && code !== 0xffff);
};

const xml = (text: string) =>
  [...text]
    .filter(xmlAllowed)
    .join('')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');

/** JUnit XML: one testsuite per protocol, one testcase per check; skips are <skipped>, never passes. */
export function junitXml(report: Report): string {
  const suites = new Map<string, CheckResult[]>();
  for (const result of report.checks) suites.set(result.protocol, [...(suites.get(result.protocol) ?? []), result]);
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const { summary } = report;
  lines.push(
    `<testsuites name="storefront-conformance ${xml(report.target)}" tests="${summary.total}" failures="${summary.fail}" skipped="${summary.skip}">`,
  );
  for (const [protocol, results] of suites) {
    const count = (outcome: Outcome) => results.filter((result) => result.outcome === outcome).length;
    const seconds = results.reduce((sum, result) => sum + result.durationMs, 0) / 1000;
    lines.push(
      `  <testsuite name="${xml(protocol)}" tests="${results.length}" failures="${count('fail')}" skipped="${count('skip')}" errors="0" time="${seconds.toFixed(3)}">`,
    );
    for (const result of results) {
      const classname = [result.protocol, result.capability, result.transport].filter(Boolean).join('.');
      const open = `    <testcase classname="${xml(classname)}" name="${xml(`${result.id}: ${result.title}`)}" time="${(result.durationMs / 1000).toFixed(3)}"`;
      if (result.outcome === 'pass') lines.push(`${open}/>`);
      else if (result.outcome === 'skip')
        lines.push(`${open}>`, `      <skipped message="${xml(result.message ?? '')}"/>`, '    </testcase>');
      else
        lines.push(
          `${open}>`,
          `      <failure message="${xml(result.message ?? '')}">${xml(`${result.message ?? ''}\nspec: ${result.spec}`)}</failure>`,
          '    </testcase>',
        );
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}
