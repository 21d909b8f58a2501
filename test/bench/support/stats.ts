/** Nearest-rank percentile of unsorted values (p in 0..100). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export const median = (values: number[]) => percentile(values, 50);

export interface Distribution {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export function distribution(values: number[]): Distribution {
  const mean = values.reduce((sum, value) => sum + value, 0) / (values.length || 1);
  return { count: values.length, p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values), mean };
}

export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || Number.isNaN(value)) return 'n/a';
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(Math.min(digits, 1));
  return value.toFixed(digits + 1);
}

export const ratio = (value: number, ours: number) => (ours > 0 && Number.isFinite(value) ? value / ours : Number.NaN);

export function fmtRatio(value: number): string {
  if (Number.isNaN(value)) return 'n/a';
  return `${value >= 10 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toFixed(3)}×`;
}

export const mb = (bytes: number) => bytes / 1024 / 1024;
