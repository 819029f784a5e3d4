/** Bytes of one caller-given value a log line carries at most. */
export const LOGGABLE_CHARS = 200;

/**
 * What a caller sent, fit for one log line: control characters (newlines above all: a forged line)
 * and backslashes escaped, cut to `max` characters with the length it had.
 */
export function loggable(text: string, max = LOGGABLE_CHARS): string {
  const cut = text.length > max ? `${text.slice(0, max)}... (${text.length} characters)` : text;
  // eslint-disable-next-line no-control-regex -- control characters are what it escapes
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/g, (c) => (c === '\\' ? '\\\\' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
