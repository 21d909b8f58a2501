import type { Analysis } from './analysis';

export interface ChaosReport {
  title: string;
  /** The run's settings and the faults it injected. */
  parameters: Array<[string, string | number]>;
  /** Figures and checked promises (the ledger's analysis plus the run's own checks). */
  analysis: Analysis;
  stallReports: string[];
  /** Lines that show a broken promise: ghosts, unexplained duplicates, order violations, rows a stalled relay changed. */
  evidence: string[];
  runDir: string;
}

const table = (rows: Array<[string, string | number]>, head: [string, string]) =>
  [`| ${head[0]} | ${head[1]} |`, '|---|---|', ...rows.map(([name, value]) => `| ${name} | ${value} |`)].join('\n');

/** The report of a chaos run as Markdown: settings, figures, one line per promise, the evidence of anything broken. */
export function renderReport({ title, parameters, analysis, stallReports, evidence, runDir }: ChaosReport): string {
  const failed = analysis.findings.filter((finding) => !finding.ok);
  return [
    `## ${title}`,
    '',
    table(parameters, ['parameter', 'value']),
    '',
    table(analysis.figures, ['figure', 'value']),
    '',
    '| promise | result | |',
    '|---|---|---|',
    ...analysis.findings.map((finding) => `| ${finding.check} | ${finding.detail} | ${!finding.ok ? '**BROKEN**' : finding.notChecked ? 'not checked' : 'ok'} |`),
    '',
    `Duplicates by cause: ${Object.entries(analysis.duplicatesByCause).map(([cause, n]) => `${cause} ${n}`).join(', ') || 'none'}.`,
    '',
    ...(stallReports.length ? ['Stalls:', ...stallReports.map((line) => `- ${line}`), ''] : []),
    ...(evidence.length ? ['Evidence:', ...evidence.map((line) => `- ${line}`), ''] : []),
    failed.length === 0 ? '**All promises held.**' : `**${failed.length} promise(s) broken:** ${failed.map((finding) => finding.check).join('; ')}.`,
    `Logs: ${runDir}`,
  ].join('\n');
}
