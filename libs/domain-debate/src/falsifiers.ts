/**
 * Structured falsifiers (seed 004, Milestone 3): metric, threshold (a comparator, a number and its
 * unit), a deadline after the debate, and the reasoning. Vague ones are refused with the reason.
 *
 *   ">= 100 USD bn", ">= $100B", "> 50 %", "<= 0.3 correlation"   concrete
 *   "probably correlated", "around 100B", "100 USD bn", "by soon"   refused
 */
import type { Comparator, Threshold } from '@agora/contracts';

/** Words that make a falsifier unfalsifiable: whoever wrote them can always say it did not count. */
export const HEDGE_WORDS = [
  'probably',
  'possibly',
  'maybe',
  'perhaps',
  'likely',
  'unlikely',
  'might',
  'could',
  'somewhat',
  'roughly',
  'around',
  'about',
  'approximately',
  'significant',
  'significantly',
  'substantial',
  'substantially',
  'some',
  'several',
  'many',
  'few',
  'sort of',
  'kind of',
  'seems',
  'arguably',
] as const;

const COMPARATORS: Record<string, Comparator> = { '>=': '>=', '≥': '>=', '=>': '>=', '<=': '<=', '≤': '<=', '=<': '<=', '>': '>', '<': '<', '=': '=', '==': '=' };
const MULTIPLIERS: Record<string, string> = { k: 'thousand', m: 'million', b: 'billion', bn: 'billion', t: 'trillion' };

/** Hedge words found in a text (whole words, case-insensitive). */
export function hedgeWordsIn(text: string): string[] {
  const lower = ` ${text.toLowerCase().replace(/[^a-z0-9%$]+/g, ' ')} `;
  return HEDGE_WORDS.filter((w) => lower.includes(` ${w} `));
}

/**
 * Parses a threshold: comparator, number, unit. The unit may come before the number as a currency
 * sign (`$100B` is 100 with unit `$ billion`) or after it (`100 USD bn`, `50 %`).
 */
export function parseThreshold(text: string): { threshold: Threshold } | { problem: string } {
  const t = text.trim();
  const match = /^(>=|<=|=>|=<|==|≥|≤|>|<|=)\s*(.*)$/.exec(t);
  if (!match) return { problem: `no comparator in threshold "${t}": start it with >=, >, <=, < or =` };
  const comparator = COMPARATORS[match[1]!]!;
  const rest = match[2]!.trim();
  const number = /^([$€£¥₿])?\s*(-?\d+(?:[.,]\d+)*)\s*(.*)$/.exec(rest);
  if (!number) return { problem: `no number in threshold "${t}": say how much, e.g. ">= 100 USD bn"` };
  const currency = number[1] ?? '';
  const value = Number(number[2]!.replace(/,(?=\d{3}\b)/g, '').replace(',', '.'));
  if (!Number.isFinite(value)) return { problem: `"${number[2]}" in threshold "${t}" is not a number` };
  let suffix = number[3]!.trim();
  const multiplier = /^(k|m|b|bn|t)\b\s*(.*)$/i.exec(suffix);
  if (multiplier && (currency !== '' || multiplier[2] !== '')) suffix = `${MULTIPLIERS[multiplier[1]!.toLowerCase()]} ${multiplier[2]}`.trim();
  const unit = `${currency} ${suffix}`.trim();
  if (unit === '') return { problem: `no unit in threshold "${t}": say what the number counts (%, USD, BTC, days...)` };
  return { threshold: { comparator, value, unit, text: t } };
}

/** Reads a deadline written YYYY-MM-DD (a date, or the start of an ISO time). */
export function parseDeadline(text: string): { date: string } | { problem: string } {
  const match = /^(\d{4}-\d{2}-\d{2})(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(text.trim());
  if (!match || Number.isNaN(Date.parse(`${match[1]}T00:00:00Z`))) return { problem: `no date in deadline "${text}": write it YYYY-MM-DD` };
  return { date: match[1]! };
}

export interface FalsifierInput {
  metric: string;
  threshold: string;
  deadline: string;
  reasoning: string;
}

export interface StructuredFalsifier {
  metric: string;
  threshold: Threshold;
  deadline: string;
  reasoning: string;
}

/**
 * Checks a falsifier against the debate's time `now`: every problem found, or the structured
 * falsifier. Hedge words are looked for in the metric and the threshold (the reasoning may weigh). The deadline must be a day after `now` (a falsifier resolves after the debate).
 */
export function checkFalsifier(input: FalsifierInput, now: string): { falsifier: StructuredFalsifier; problems: [] } | { falsifier?: undefined; problems: string[] } {
  const problems: string[] = [];
  const hedges = [...new Set([...hedgeWordsIn(input.metric), ...hedgeWordsIn(input.threshold)])];
  if (hedges.length > 0) problems.push(`hedge words (${hedges.join(', ')}): a falsifier says exactly what would change the author's mind`);
  const threshold = parseThreshold(input.threshold);
  if ('problem' in threshold) problems.push(threshold.problem);
  const deadline = parseDeadline(input.deadline);
  if ('problem' in deadline) problems.push(deadline.problem);
  else if (deadline.date <= now.slice(0, 10)) problems.push(`deadline ${deadline.date} is not after the debate (${now.slice(0, 10)}): a falsifier is resolved later, by what happens`);
  if (problems.length > 0 || 'problem' in threshold || 'problem' in deadline) return { problems };
  return { falsifier: { metric: input.metric.trim(), threshold: threshold.threshold, deadline: deadline.date, reasoning: input.reasoning.trim() }, problems: [] };
}

/** The threshold the other way round: what the opposing side would have to see. */
export function invertComparator(c: Comparator): Comparator {
  return ({ '>=': '<', '>': '<=', '<=': '>', '<': '>=', '=': '=' } as const)[c];
}

/** One line: "Spot BTC ETF AUM >= 100 USD billion by 2027-12-31". */
export const falsifierLine = (f: { metric: string; threshold: Threshold; deadline: string }): string => `${f.metric} ${f.threshold.comparator} ${f.threshold.value} ${f.threshold.unit} by ${f.deadline}`;

/** Whether a recorded falsifier is still concrete (no hedge words, a threshold that parses, a date). */
export function isConcrete(f: { metric: string; threshold: Threshold; deadline: string; reasoning: string }): boolean {
  return hedgeWordsIn(`${f.metric} ${f.threshold.text}`).length === 0 && !('problem' in parseThreshold(f.threshold.text)) && !('problem' in parseDeadline(f.deadline));
}
