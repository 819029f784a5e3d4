/**
 * The voting configuration as an aggregate: the stream `voting_config-global` holds every change an
 * operator made (VotingConfigUpdated, each with the whole configuration after the change). Before
 * the first change the seed's defaults apply. The voting service reads the current configuration
 * when it creates a session and the session records it (`rules`, `configRevision`), so a replay
 * knows which rules decided each session.
 */
import { DEFAULT_VOTING_CONFIG, VOTING_CONFIG_CATEGORY, VOTING_CONFIG_ID, VotingConfig, type votingContracts } from '@agora/contracts';
import { DomainError, requireRole, type CommandsOf, type Decider, type EventsOf } from '@agora/decider';

export type { VotingConfig } from '@agora/contracts';

export const votingConfigStreamId = (): string => `${VOTING_CONFIG_CATEGORY}-${VOTING_CONFIG_ID}`;

/** A configuration from partial settings over the seed's defaults. Throws a TypeError naming every bad setting (also minValidators above maxValidators). */
export function defineVotingConfig(input: Partial<VotingConfig> = {}): VotingConfig {
  const parsed = VotingConfig.safeParse({ ...DEFAULT_VOTING_CONFIG, ...input });
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(config)'}: ${i.message}`);
  if (parsed.success && parsed.data.minValidators > parsed.data.maxValidators) problems.push(`minValidators ${parsed.data.minValidators} exceeds maxValidators ${parsed.data.maxValidators}`);
  if (problems.length > 0 || !parsed.success) throw new TypeError(`invalid voting configuration: ${problems.join('; ')}`);
  return parsed.data;
}

export const DEFAULT_CONFIG: VotingConfig = defineVotingConfig();

/** The configuration's events and commands, from the voting contracts. */
export type VotingConfigEvent = EventsOf<Extract<(typeof votingContracts.events)[number], { category: typeof VOTING_CONFIG_CATEGORY }>>;
export type VotingConfigCommand = CommandsOf<Extract<(typeof votingContracts.commands)[number], { aggregate: 'config' }>>;

/** The configuration in force, and how many changes made it (0: the defaults). */
export interface VotingConfigState {
  config: VotingConfig;
  changes: number;
  updatedAt: string | null;
  updatedBy: string | null;
}

const CONFIG_KEYS = Object.keys(DEFAULT_VOTING_CONFIG) as (keyof VotingConfig)[];

export const votingConfigDecider: Decider<VotingConfigCommand, VotingConfigEvent, VotingConfigState> = {
  initialState: () => ({ config: DEFAULT_CONFIG, changes: 0, updatedAt: null, updatedBy: null }),
  evolve: (state, event) => ({ config: event.data.config, changes: state.changes + 1, updatedAt: event.data.updatedAt, updatedBy: event.data.updatedBy }),
  decide(command, state) {
    const { payload, context } = command;
    requireRole(context, 'operator', 'change the voting configuration');
    const next: VotingConfig = { ...state.config };
    for (const key of CONFIG_KEYS) if (payload[key] !== undefined) (next as Record<string, unknown>)[key] = payload[key];
    if (next.minValidators > next.maxValidators) {
      throw new DomainError('invalid_command', `minValidators ${next.minValidators} would exceed maxValidators ${next.maxValidators}`, {
        minValidators: next.minValidators,
        maxValidators: next.maxValidators,
      });
    }
    const changed = CONFIG_KEYS.filter((key) => next[key] !== state.config[key]);
    if (changed.length === 0) return []; // already so
    return [{ type: 'VotingConfigUpdated', data: { config: next, changed, updatedBy: context.actor, updatedAt: context.now } }];
  },
};
