/** What a browser may import of @agora/identity (`@agora/identity/browser`): nothing here uses node:crypto. */
export { canonicalJson } from './canonical-json.js';
export { COMMAND_SIGNING_DOMAIN, COMMAND_SIGNING_TAG, commandSigningText, domainSigningText, loginSigningText, PUBLIC_KEY_PREFIX, SECRET_KEY_PREFIX, type LoginChallengeAnswer, type UnsignedCommand } from './signing-text.js';
export { envelopeOfMetadata, envelopesFromMetadata } from './log-envelope.js';
export { serviceKeyAt, type ServiceKeyEntry, type ServiceKeyring } from './service-key-at.js';
