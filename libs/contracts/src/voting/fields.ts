// Voting contracts: schema pieces shared by the configuration and its command (internal to the contracts, not re-exported).
import { z } from 'zod';

export const ValidatorCount = z.number().int().min(3).max(25);
