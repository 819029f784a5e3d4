import { mcpSettingFromEnv } from '../src/options.js';

describe('AGORA_MCP_ALLOWED_HOSTS', () => {
  it('serves /mcp to localhost by default, to the names given besides, or not at all', () => {
    expect(mcpSettingFromEnv({})).toEqual({});
    expect(mcpSettingFromEnv({ AGORA_MCP_ALLOWED_HOSTS: ' Agora.Example.org, gw.internal ,' })).toEqual({ allowedHostnames: ['agora.example.org', 'gw.internal'] });
    expect(mcpSettingFromEnv({ AGORA_MCP_ALLOWED_HOSTS: 'off' })).toBe(false);
  });
});
