/**
 * Pure pieces more than one domain uses, so that no protocol depends on another for them: seeded
 * draws (the dialectic's reviewer selection and audit sample, the chamber's label shuffles and
 * arbiter rotation) and the circuit breaker (the registry's agent decider trips it; the dialectic
 * recovers from it).
 */
export * from './draw.js';
export * from './breaker.js';
