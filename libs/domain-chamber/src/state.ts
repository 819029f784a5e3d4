/** A chamber session's state, folded from its events. */
import type {
  ChamberCallCompleted,
  ChamberCallFailed,
  ChamberCallRequested,
  ChamberSessionConcluded,
  ChamberSessionProposed,
  ChamberStatus,
  DataOf,
  Divergence,
  ChamberFollowUpRecorded,
  ChamberSessionApproved,
} from '@agora/contracts';
import type { ChamberEvent } from './events.js';

export type CallStatus = 'pending' | 'completed' | 'failed';

export interface CallState {
  request: DataOf<typeof ChamberCallRequested>;
  status: CallStatus;
  completed?: DataOf<typeof ChamberCallCompleted>;
  failed?: DataOf<typeof ChamberCallFailed>;
}

export interface ChamberSessionState {
  status: ChamberStatus | 'none';
  proposal?: DataOf<typeof ChamberSessionProposed>;
  approval?: DataOf<typeof ChamberSessionApproved>;
  /** Every call in request order. */
  calls: CallState[];
  divergences: Divergence[];
  conclusion?: DataOf<typeof ChamberSessionConcluded>;
  followUp?: DataOf<typeof ChamberFollowUpRecorded>;
  cancelledAt?: string;
  /** Cost of the calls settled so far. */
  cost: number;
  updatedAt?: string;
}

export const initialChamberState = (): ChamberSessionState => ({ status: 'none', calls: [], divergences: [], cost: 0 });

const IN_PROGRESS: readonly ChamberStatus[] = ['blind', 'cross_exam', 'arbitration'];
export const isInProgress = (s: ChamberSessionState) => IN_PROGRESS.includes(s.status as ChamberStatus);
export const isFinal = (s: ChamberSessionState) => ['rejected', 'expired', 'consensus', 'no_consensus', 'failed', 'cancelled'].includes(s.status);
export const pendingCalls = (s: ChamberSessionState) => s.calls.filter((c) => c.status === 'pending');

const money = (x: number) => Math.round(x * 1_000_000) / 1_000_000;

export function evolveChamber(state: ChamberSessionState, event: ChamberEvent): ChamberSessionState {
  switch (event.type) {
    case 'ChamberSessionProposed':
      return { ...state, status: 'awaiting_approval', proposal: event.data, updatedAt: event.data.proposedAt };
    case 'ChamberSessionApproved':
      return { ...state, status: 'blind', approval: event.data, updatedAt: event.data.approvedAt };
    case 'ChamberSessionRejected':
      return { ...state, status: 'rejected', updatedAt: event.data.rejectedAt };
    case 'ChamberApprovalExpired':
      return { ...state, status: 'expired', updatedAt: event.data.expiredAt };
    case 'ChamberSessionCancelled':
      return { ...state, status: 'cancelled', cancelledAt: event.data.cancelledAt, updatedAt: event.data.cancelledAt };
    case 'ChamberCallRequested': {
      const status: ChamberStatus = event.data.step === 'blind' ? 'blind' : event.data.step === 'cross_exam' ? 'cross_exam' : 'arbitration';
      return { ...state, status: isInProgress(state) ? status : state.status, calls: [...state.calls, { request: event.data, status: 'pending' }], updatedAt: event.data.requestedAt };
    }
    case 'ChamberCallCompleted':
      return {
        ...state,
        calls: state.calls.map((c) => (c.request.callId === event.data.callId ? { ...c, status: 'completed', completed: event.data } : c)),
        cost: money(state.cost + event.data.cost),
        updatedAt: event.data.completedAt,
      };
    case 'ChamberCallFailed':
      return {
        ...state,
        calls: state.calls.map((c) => (c.request.callId === event.data.callId ? { ...c, status: 'failed', failed: event.data } : c)),
        cost: money(state.cost + event.data.cost),
        updatedAt: event.data.failedAt,
      };
    case 'ChamberDivergenceMeasured':
      return { ...state, divergences: [...state.divergences, event.data.divergence], updatedAt: event.data.measuredAt };
    case 'ChamberPositionChanged':
      return state;
    case 'ChamberSessionConcluded':
      return { ...state, status: event.data.outcome, conclusion: event.data, updatedAt: event.data.concludedAt };
    case 'ChamberFollowUpRecorded':
      return { ...state, followUp: event.data, updatedAt: event.data.at };
    default:
      return state;
  }
}
