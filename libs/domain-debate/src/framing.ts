/**
 * Binary framing (seed 004, v1 moderator: "rewrite confused questions"). A question YES or NO cannot
 * answer is rewritten into one it can, by rules a reader can check:
 *
 *   "Is Bitcoin a hedge or a risk asset?"   either/or: the first alternative, "Is Bitcoin a hedge?"
 *   "Bitcoin is digital gold"               a statement: its verb first, "Is Bitcoin digital gold?"
 *   "Bitcoin protects wealth"               a statement without one: "Is it true that Bitcoin protects wealth?"
 *   "What drives Bitcoin's price?"          open: no rewrite (undefined); the caller frames the topic
 *
 * The moderator uses it when DISCOVERY's budget is spent without an accepted question, and a
 * proposal that is an either/or question is refused with its framing as the suggestion.
 */
const AUXILIARY = /^(is|are|was|were|will|would|does|do|did|can|could|should|has|have|had|must|may|might|shall)$/i;
const OPEN_WORD = /^(what|how|why|which|when|where|who|whom|whose)$/i;
/** "or" that keeps a question binary: "or more", "or not", "or worse"... */
const BENIGN_OR = /^(more|less|fewer|worse|better|not|above|below|longer|so)$/i;

const words = (text: string): string[] => text.trim().split(/\s+/).filter((w) => w !== '');
const strip = (text: string): string => text.trim().replace(/[?.!\s]+$/, '');

/** The index of an either/or "or" in a question's words, or -1. */
function eitherOrAt(ws: readonly string[]): number {
  return ws.findIndex((w, i) => i > 0 && /^or$/i.test(w) && !BENIGN_OR.test((ws[i + 1] ?? '').replace(/[^A-Za-z]/g, '')));
}

/** Whether a question offers alternatives (YES or NO would not say which). */
export const isEitherOr = (question: string): boolean => AUXILIARY.test(words(question)[0] ?? '') && eitherOrAt(words(strip(question))) > 0;

/** The question rewritten so YES or NO answers it, or undefined for an open question (What/How/Why...). */
export function binaryFrame(text: string): string | undefined {
  const ws = words(strip(text));
  if (ws.length === 0) return undefined;
  const first = ws[0]!;
  if (OPEN_WORD.test(first)) return undefined;
  if (AUXILIARY.test(first)) {
    const or = eitherOrAt(ws);
    const kept = (or > 0 ? ws.slice(0, or) : ws).join(' ').replace(/,$/, '');
    return `${kept}?`;
  }
  const verb = ws.findIndex((w, i) => i > 0 && AUXILIARY.test(w));
  if (verb > 0) {
    const subject = ws.slice(0, verb).join(' ');
    const aux = ws[verb]!;
    return `${aux[0]!.toUpperCase()}${aux.slice(1).toLowerCase()} ${subject} ${ws.slice(verb + 1).join(' ')}?`.replace(/\s+\?$/, '?');
  }
  return `Is it true that ${ws.join(' ')}?`;
}

/**
 * The question a thread carries into CRUX_LOCK when DISCOVERY's budget is spent without an accepted
 * one: the proposed question with the most acceptances (the latest on a tie), framed; else the
 * thread's topic, framed; else the topic as the moderator's forced YES/NO.
 */
export function framedQuestionFor(t: { topic: string; questions: readonly { text: string; acceptedBy: readonly string[]; seq: number }[] }): { question: string; from: string } {
  const leading = [...t.questions].sort((a, b) => b.acceptedBy.length - a.acceptedBy.length || b.seq - a.seq)[0];
  const fromProposal = leading ? binaryFrame(leading.text) : undefined;
  if (leading && fromProposal) return { question: fromProposal, from: `question ${leading.seq}, the most accepted` };
  const fromTopic = binaryFrame(t.topic);
  if (fromTopic) return { question: fromTopic, from: 'the topic' };
  return { question: `Answer YES or NO: ${strip(t.topic)}?`, from: 'the topic' };
}
