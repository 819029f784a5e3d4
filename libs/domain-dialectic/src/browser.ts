/** What a browser may import of @agora/domain-dialectic (`@agora/domain-dialectic/browser`): nothing here uses node:crypto. */
export { canonicalConditions, resolutionPayload, resolutionSigningText, RESOLUTION_SIGNING_TAG, type ResolutionInput } from './resolution-text.js';
