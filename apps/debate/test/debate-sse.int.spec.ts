/**
 * GET /v1/debates/:id/events on the gateway: the seed's event types, in log order, from the log
 * (history, then live), resumable with Last-Event-ID without a gap or a repeat; 404 for a debate
 * that does not exist. The seed's scripted debate is played by its two debaters meanwhile.
 */
import { exampleScript } from '@agora/domain-debate';
import { waitFor } from '@agora/testing';
import { playScript } from '../src/scripted.js';
import { startHarness, type Harness } from './support/harness.js';

interface Frame {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** Reads SSE frames from a fetch response body. */
async function readFrames(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const frames: Frame[] = [];
  const done = (async () => {
    if (!res.body) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const text = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const field = (name: string) => text.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          const data = field('data');
          if (data !== undefined) frames.push({ id: field('id')!, event: field('event')!, data: JSON.parse(data) as Record<string, unknown> });
        }
      }
    } catch {
      // aborted
    }
  })();
  return { status: res.status, contentType: res.headers.get('content-type'), frames, close: () => (controller.abort(), done) };
}

describe('GET /v1/debates/:id/events', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 30_000);
  afterAll(() => h?.close());

  it("streams the seed's event types from the log, live, and resumes after Last-Event-ID", async () => {
    await h.open('sse-debate');
    await h.open('other-debate');
    const script = exampleScript();
    await playScript(h.client, 'sse-debate', script.slice(0, 6));
    const url = `${h.gateway.url}/v1/debates/sse-debate/events`;
    const first = await readFrames(url);
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    await waitFor(() => first.frames.some((f) => f.event === 'stage_transition'), 'the history up to CRUX_LOCK');
    await playScript(h.client, 'sse-debate', script.slice(6, 16)); // through the lock
    await waitFor(() => first.frames.some((f) => f.event === 'lock_succeeded'), 'the lock, live');
    await first.close();

    const names = first.frames.map((f) => f.event);
    expect(names[0]).toBe('debate_opened');
    for (const seed of ['message_posted', 'question_proposed', 'question_accepted', 'stage_transition', 'steelman_attempt', 'steelman_graded', 'commitment_made', 'falsifier_declared', 'lock_attempted', 'lock_failed', 'lock_succeeded']) expect(names).toContain(seed);
    // Every frame is the debate's, in log order, its position as id; nothing of the other debate.
    expect(first.frames.every((f) => f.data['debateId'] === 'sse-debate')).toBe(true);
    const positions = first.frames.map((f) => BigInt(f.id));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(first.frames.filter((f) => f.event === 'stage_transition').map((f) => [f.data['from'], f.data['to']])).toEqual([
      ['DISCOVERY', 'CRUX_LOCK'],
      ['CRUX_LOCK', 'EVIDENCE'],
    ]);
    expect(first.frames.filter((f) => f.event === 'lock_attempted').map((f) => f.data['failed'])).toEqual([['falsifiers_declared'], []]);
    const lock = first.frames.find((f) => f.event === 'lock_succeeded')!;
    expect(lock.data).toMatchObject({ commitments: [{ agentId: 'saylor', side: 'YES' }, { agentId: 'hayes', side: 'NO' }], falsifiers: [{ agentId: 'saylor' }, { agentId: 'hayes' }] });

    // Resume after the 5th frame: the rest, then what comes next, without a gap or a repeat.
    const resumed = await readFrames(url, { 'last-event-id': first.frames[4]!.id });
    await waitFor(() => resumed.frames.length >= first.frames.length - 5, 'the resumed history');
    await playScript(h.client, 'sse-debate', script.slice(16));
    await waitFor(() => resumed.frames.some((f) => f.event === 'debate_complete'), 'the debate to complete, live');
    await resumed.close();
    expect(resumed.frames.slice(0, first.frames.length - 5).map((f) => f.id)).toEqual(first.frames.slice(5).map((f) => f.id));
    // Every move of the debate is there, not only the seed's nine: a live view needs them all.
    for (const move of ['evidence_provided', 'challenge_issued', 'concession_made', 'debater_concluded']) expect(resumed.frames.map((f) => f.event)).toContain(move);
    const complete = resumed.frames.find((f) => f.event === 'debate_complete')!;
    expect(complete.data).toMatchObject({ outcome: 'converged', primaryThreadId: 'main', crux: { validated: true } });
    expect(new Set(resumed.frames.map((f) => f.id)).size).toBe(resumed.frames.length);
  }, 60_000);

  it('answers 404 for a debate that does not exist and 400 for a bad id; /docs describes the route', async () => {
    const missing = await fetch(`${h.gateway.url}/v1/debates/nope/events`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const bad = await fetch(`${h.gateway.url}/v1/debates/${encodeURIComponent('a b')}/events`);
    expect(bad.status).toBe(400);
    const docs = (await (await fetch(`${h.gateway.url}/docs/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(docs.paths)).toEqual(expect.arrayContaining(['/v1/debates/{debateId}/events', '/v1/debate/debates/{debateId}', '/v1/debate/debates']));
  });
});
