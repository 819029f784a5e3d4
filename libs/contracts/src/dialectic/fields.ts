// Dialectic contracts: payload fields shared by the commands and events (internal to the contracts, not re-exported).
import { EntityId, PublicKeyText } from '../common.js';
import { Ed25519Signature } from './vocabulary.js';

export const session = { sessionId: EntityId };

export const signedBy = {
  publicKey: PublicKeyText.describe("The signer's key as registered (the service checks it is the actor's)"),
  signature: Ed25519Signature.describe('Signature of the resolution payload (see resolutionSigningBytes in libs/domain-dialectic)'),
};
