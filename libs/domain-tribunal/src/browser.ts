/** What a browser may import of @agora/domain-tribunal (`@agora/domain-tribunal/browser`): the figures' pure rules, without the decider's schemas. */
export { healthBand, OVERHEAD_ABOVE, RUBBER_STAMPING_BELOW, type HealthBand } from './health-band.js';
