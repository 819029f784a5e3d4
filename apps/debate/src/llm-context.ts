/** What a model playing a debater is shown and asked for: shared with the fleet's debater participant, where it lives. */
export { gateNeeds, ModelMove, MOVE_GUIDE, movePromptOf, obligationsOf, systemPromptOf, threadFor, threadMovesOffered, toDebateMove, type ModelMoveKind } from '@agora/participants';
