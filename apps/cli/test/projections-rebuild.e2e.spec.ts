/**
 * `agora projections rebuild` beside a running `npm start`, as an operator runs it from a second
 * terminal once a read model's rows are suspect: the standalone keeps its lock on the embedded log
 * and keeps answering and writing; the rebuild reads the log beside it, folds it into scratch tables
 * and switches, and the proposals read over HTTP are the log's again, with a proposal submitted
 * during the rebuild among them.
 */
import { join } from 'node:path';
import { proposalsTable } from '@agora/read-models';
import { SqliteReadDatabase } from '@agora/read-store';
import { runToCompletion, startStandalone, waitFor, type Standalone } from '@agora/testing';

const TIMEOUT_MS = 30_000;

describe('agora projections rebuild beside npm start (e2e)', () => {
  let agora: Standalone | undefined;

  afterAll(async () => {
    await agora?.stop();
  });

  it('puts the log\'s rows in place of altered ones while the standalone goes on, and refuses an unknown name', async () => {
    agora = await startStandalone({ label: 'projections-rebuild' });
    const proposal = (id: string) => agora!.get<{ title: string; status: string }>(`/v1/proposal/proposals/${id}`, { as: 'root' }).catch(() => undefined);
    await agora.ok('root', 'RegisterAgent', { agentId: 'seldon', publicKey: agora.key('seldon').publicKey, displayName: 'Hari Seldon', roles: ['executive'] });
    const submit = (id: string) => agora!.ok('seldon', 'SubmitProposal', { proposalId: id, title: `Keep ${id}`, body: `Store ${id} for a year.`, problem: 'Audits need history' });
    for (const id of ['p1', 'p2', 'p3']) await submit(id);
    await waitFor(async () => (await proposal('p3')) !== undefined, 'p3 to be read', TIMEOUT_MS);

    // Rows gone wrong in the live read side (a hand edit, a bug of an earlier release).
    const live = new SqliteReadDatabase(join(agora.dataDir, 'read-models.sqlite'));
    try {
      await live.run(`UPDATE ${proposalsTable.table} SET doc = REPLACE(doc, 'Keep p1', 'Tampered') WHERE id = $1`, ['p1']);
      await live.run(`DELETE FROM ${proposalsTable.table} WHERE id = $1`, ['p2']);
    } finally {
      await live.close();
    }
    expect((await proposal('p1'))?.title).toBe('Tampered');
    expect(await proposal('p2')).toBeUndefined();

    // The rebuild, and a command the standalone takes meanwhile.
    const rebuilding = runToCompletion('apps/cli/src/main.ts', ['projections', 'rebuild', 'proposals'], { AGORA_DATA_DIR: agora.dataDir }, 120_000);
    await submit('p4');
    const rebuilt = await rebuilding;
    expect(rebuilt.stderr).toMatch(/\[proposals\] fold: [\d,]+ of [\d,]+ events/);
    expect(rebuilt.stdout).toMatch(/^rebuilt proposals \(version \d+\): [\d,]+ events read, [\d,]+ of its own, in [\d.]+ s; switched in [\d.]+ s \(proposals_v\d+ [45], /m);
    expect(rebuilt.code).toBe(0);

    expect((await proposal('p1'))?.title).toBe('Keep p1');
    expect((await proposal('p2'))?.title).toBe('Keep p2');
    await waitFor(async () => (await proposal('p4'))?.title === 'Keep p4', 'p4 to be read', TIMEOUT_MS);
    // The standalone writes on after the switch.
    await submit('p5');
    await waitFor(async () => (await proposal('p5'))?.title === 'Keep p5', 'p5 to be read', TIMEOUT_MS);

    const unknown = await runToCompletion('apps/cli/src/main.ts', ['projections', 'rebuild', 'proposal'], { AGORA_DATA_DIR: agora.dataDir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no read model "proposal": one of proposals, voting_sessions/);
  }, 240_000);
});
