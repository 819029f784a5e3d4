/**
 * The seed's health bands for the tribunal's challenge rate (seed 000, "Observable Metrics"): pure
 * and free of imports, so the console's pages use them as the projections do.
 */

/** The seed's target: 20 to 40 % of proposals challenged; below 20 % the tribunal is losing its teeth. */
export const RUBBER_STAMPING_BELOW = 0.2;
/** The seed: "if > 60 %, coordination overhead too high". */
export const OVERHEAD_ABOVE = 0.6;

export type HealthBand = 'rubber_stamping' | 'healthy' | 'overhead' | 'unknown';

/**
 * The seed's bands for a challenge rate: below 0.2 `rubber_stamping`, 0.2 to 0.6 inclusive
 * `healthy` (the seed's target is 0.2 to 0.4; 0.4 to 0.6 is tolerated), above 0.6 `overhead`,
 * `unknown` when there is no rate (nothing reviewed).
 */
export function healthBand(challengeRate: number | null): HealthBand {
  if (challengeRate === null || Number.isNaN(challengeRate)) return 'unknown';
  if (challengeRate < RUBBER_STAMPING_BELOW) return 'rubber_stamping';
  if (challengeRate > OVERHEAD_ABOVE) return 'overhead';
  return 'healthy';
}
