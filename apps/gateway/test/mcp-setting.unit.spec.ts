import { mcpSettingFromEnv } from '../src/options.js';

describe('AGORA_MCP_ALLOWED_HOSTS', () => {
  it('serves /mcp to localhost by default, to the names given besides, or not at all', () => {
    expect(mcpSettingFromEnv({})).toEqual({});
    expect(mcpSettingFromEnv({ AGORA_MCP_ALLOWED_HOSTS: ' Agora.Example.org, gw.internal ,' })).toEqual({ allowedHostnames: ['agora.example.org', 'gw.internal'] });
    expect(mcpSettingFromEnv({ AGORA_MCP_ALLOWED_HOSTS: 'off' })).toBe(false);
  });

  it('bounds its sessions by AGORA_MCP_SESSIONS_PER_READER, AGORA_MCP_SESSIONS_MAX and AGORA_MCP_SESSION_IDLE_SECONDS', () => {
    expect(mcpSettingFromEnv({ AGORA_MCP_SESSIONS_PER_READER: '2', AGORA_MCP_SESSIONS_MAX: '40', AGORA_MCP_SESSION_IDLE_SECONDS: '90' })).toEqual({ sessions: { sessionsPerReader: 2, maxSessions: 40, idleSeconds: 90 } });
    expect(() => mcpSettingFromEnv({ AGORA_MCP_SESSIONS_MAX: 'lots' })).toThrow(/^AGORA_MCP_SESSIONS_MAX="lots" must be a positive whole number of sessions/);
  });
});
