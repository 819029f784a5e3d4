/** One Server-Sent Events message. */
export interface SseMessage {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/**
 * An incremental text/event-stream parser (the WHATWG rules that matter here): lines end in LF,
 * CRLF or CR; a blank line ends a message; `:` lines are comments; `data` lines join with LF; a
 * message without data is not dispatched.
 */
export class SseParser {
  private buffer = '';
  private message: SseMessage = { id: undefined, event: undefined, data: '' };
  private hasData = false;
  /** Comments seen (heartbeats). */
  comments = 0;

  /** Feeds a chunk of text; returns the messages it completed. */
  feed(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    let match: RegExpExecArray | null;
    const lineEnd = /\r\n|\r|\n/g;
    let start = 0;
    while ((match = lineEnd.exec(this.buffer)) !== null) {
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(start, match.index);
      start = match.index + match[0].length;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') {
      const message = this.message;
      const dispatch = this.hasData;
      this.message = { id: undefined, event: undefined, data: '' };
      this.hasData = false;
      return dispatch ? message : undefined;
    }
    if (line.startsWith(':')) {
      this.comments++;
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') {
      this.message.data = this.hasData ? `${this.message.data}\n${value}` : value;
      this.hasData = true;
    } else if (field === 'id') this.message.id = value;
    else if (field === 'event') this.message.event = value;
    return undefined;
  }
}
