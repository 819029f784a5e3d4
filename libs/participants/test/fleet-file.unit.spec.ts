import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetFileError, parseFleetFile, readFleetFile, registryRoles } from '../src/index.js';

const agent = (fields: Record<string, unknown> = {}) => ({ id: 'harbinger', keyFile: 'keys/harbinger.key.json', roles: ['reviewer'], constitutions: ['risk'], ...fields });
const text = (fleet: unknown) => JSON.stringify(fleet);

function problems(fleet: unknown): string[] {
  try {
    parseFleetFile(typeof fleet === 'string' ? fleet : text(fleet), '/fleets/fleet.json');
  } catch (error) {
    expect(error).toBeInstanceOf(FleetFileError);
    return (error as FleetFileError).problems;
  }
  throw new Error('the fleet file was accepted');
}

describe('the fleet file', () => {
  it('resolves paths against its own directory and applies the defaults', () => {
    const fleet = parseFleetFile(
      text({ prompts: 'my-prompts', defaults: { model: 'openai:gpt-4.1', budget: 2, temperature: 0 }, agents: [agent(), agent({ id: 'aegis', keyFile: '/keys/aegis.json', roles: ['validator', 'dialectic'], constitutions: [], specializations: ['security'], model: 'google:gemini-2.5-flash', budget: 0.5 })] }),
      '/fleets/fleet.json',
    );
    expect(fleet.prompts).toBe('/fleets/my-prompts');
    expect(fleet.state).toBe('/fleets/.agora-fleet');
    expect(fleet.agents[0]).toMatchObject({ id: 'harbinger', keyFile: '/fleets/keys/harbinger.key.json', model: 'openai:gpt-4.1', budget: 2, temperature: 0, specializations: [] });
    expect(fleet.agents[0]).not.toHaveProperty('maxOutputTokens');
    expect(fleet.agents[1]).toMatchObject({ id: 'aegis', keyFile: '/keys/aegis.json', model: 'google:gemini-2.5-flash', budget: 0.5, specializations: ['security'] });
    expect(registryRoles(fleet.agents[1]!)).toEqual(['validator']);
    expect(registryRoles({ roles: ['dialectic'] })).toEqual(['observer']);
  });

  it('names the path of each problem', () => {
    expect(problems({ agents: [agent({ model: 'gpt-4.1' })] })).toEqual(['agents[0].model: a model is written <provider>:<model>, e.g. openai:gpt-4.1']);
    expect(problems({ defaults: { model: 'openai:gpt-4.1' }, agents: [agent({ constitutions: [] })] })).toEqual(['agents[0].constitutions: a reviewer needs at least one constitution']);
    expect(problems({ defaults: { model: 'openai:gpt-4.1' }, agents: [agent(), agent({ roles: ['judge'] })] })).toEqual([expect.stringMatching(/^agents\[1\]\.roles\[0\]: /)]);
    expect(problems({ defaults: { model: 'openai:gpt-4.1' }, agents: [agent(), agent()] })).toEqual(['agents[1].id: harbinger is already agents[0]']);
    expect(problems({ agents: [agent()] })).toEqual(['agents[0].model: no model: give one here or in defaults.model']);
    expect(problems({ defaults: { model: 'openai:gpt-4.1', budget: -1 }, agents: [agent({ colour: 'red' })] })).toEqual([expect.stringMatching(/^defaults\.budget: a budget is a positive amount/), expect.stringMatching(/^agents\[0\]: .*colour/)]);
    expect(problems({ defaults: { model: 'openai:gpt-4.1' }, agents: [] })).toEqual([expect.stringMatching(/^agents: /)]);
    expect(problems({ defaults: { model: 'openai:gpt-4.1' }, agents: [agent({ id: 'Not An Id' })] })).toEqual([expect.stringMatching(/^agents\[0\]\.id: /)]);
  });

  it('reads YAML when the file is named .yaml or .yml, checked by the same schema', () => {
    const yaml = ['prompts: my-prompts', 'defaults:', '  model: openai:gpt-4.1', '  budget: 2', 'agents:', '  - id: harbinger', '    keyFile: keys/harbinger.key.json', '    roles: [reviewer]', '    constitutions: [risk]', ''].join('\n');
    const fleet = parseFleetFile(yaml, '/fleets/fleet.yaml');
    expect(fleet.prompts).toBe('/fleets/my-prompts');
    expect(fleet.agents[0]).toMatchObject({ id: 'harbinger', keyFile: '/fleets/keys/harbinger.key.json', model: 'openai:gpt-4.1', budget: 2, constitutions: ['risk'] });
    expect(() => parseFleetFile(yaml.replace('budget: 2', 'budget: -1'), '/fleets/fleet.yml')).toThrow(FleetFileError);
    expect(() => parseFleetFile('agents: [', '/fleets/fleet.yaml')).toThrow(/not YAML: /);
  });

  it('says when it is not JSON, or cannot be read, naming the file', () => {
    expect(problems('{"agents": [')).toEqual([expect.stringMatching(/^not JSON: /)]);
    const dir = mkdtempSync(join(tmpdir(), 'fleet-file-'));
    expect(() => readFleetFile(join(dir, 'missing.json'))).toThrow(/missing\.json: cannot read it: ENOENT/);
    writeFileSync(join(dir, 'two.json'), text({ agents: [agent({ model: 'x' }), agent({ id: 'b', roles: [], model: 'openai:gpt-4.1' })] }));
    expect(() => readFleetFile(join(dir, 'two.json'))).toThrow(/two\.json: 2 problems:\n {2}agents\[0\]\.model: .*\n {2}agents\[1\]\.roles: /);
  });
});
