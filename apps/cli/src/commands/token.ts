import { READ_TOKEN } from '@agora/contracts';
import { EXIT, integerOption, stringOption, UsageError, type CommandSpec } from '../command.js';
import { readToken } from '../gateway-client.js';

export const token: CommandSpec = {
  name: 'token',
  brief: 'print a read token signed with your key file (for curl and EventSource)',
  summary: `Print a read token: a compact JWS signed with the key file's secret key, naming its agent, for the gateway's audience ($AGORA_READ_AUDIENCE, else "${READ_TOKEN.defaultAudience}"), good for --lifetime seconds (at most ${READ_TOKEN.maxLifetimeSeconds}).`,
  usage: '--key <file> [--actor <agentId>] [--lifetime <seconds>]',
  description: [
    'Send it as `Authorization: Bearer <token>`, or as ?access_token=<token> where a header cannot be set',
    '(EventSource). The other agora commands make their own from --key, --read-key or $AGORA_KEY_FILE',
    '(else the operator key npm start made, <AGORA_DATA_DIR>/operator.key.json); this one says whose key it is.',
  ].join('\n'),
  options: {
    key: { type: 'string', value: '<file>', description: 'the key file (default: $AGORA_KEY_FILE)' },
    actor: { type: 'string', value: '<agentId>', description: "who reads (default: the key file's agentId)" },
    lifetime: { type: 'string', value: '<seconds>', description: `how long the token is good for (default and most: ${READ_TOKEN.maxLifetimeSeconds})` },
  },
  positionals: [],
  examples: ['agora token --key alice.key.json', 'curl -H "Authorization: Bearer $(agora token --key alice.key.json)" http://127.0.0.1:8080/v1/proposal/proposals'],
  run(args, io) {
    // Never the operator's key by default: a token is handed on (to curl, a browser), so whose it is is said.
    const path = stringOption(args, 'key') ?? (io.env['AGORA_KEY_FILE'] || undefined);
    if (path === undefined) throw new UsageError('say whose token: --key <file> (or $AGORA_KEY_FILE)', 'token');
    const lifetime = integerOption(args, 'lifetime', 'token', { min: 1, max: READ_TOKEN.maxLifetimeSeconds });
    io.stdout(`${readToken(args, io, 'token', path, lifetime)}\n`);
    return Promise.resolve(EXIT.ok);
  },
};
